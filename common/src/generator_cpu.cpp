#include "kubeload/generator_cpu.hpp"

#include <cmath>

#include "kubeload/text.hpp"

namespace kubeload {

GeneratorCpu GeneratorCpu::of(double seconds, double window_seconds,
                              std::optional<double> limit_cores, double cores) {
  GeneratorCpu cpu;
  cpu.seconds = seconds;
  cpu.window_seconds = window_seconds;
  cpu.limit_cores = limit_cores;
  cpu.cores = cores;
  if (window_seconds > 0 && cores > 0 && seconds > 0) {
    cpu.utilization = seconds / (window_seconds * cores);
  }
  return cpu;
}

std::string cpu_quantity(double cores) {
  if (!std::isfinite(cores) || cores < 0) return "-";
  const double millicores = std::round(cores * 1000.0);
  if (std::fmod(millicores, 1000.0) == 0) return shortest(millicores / 1000.0);
  return shortest(millicores) + "m";
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  // Down to the tenth, never up: a use under the line (0.8999) reads
  // "89.9%", not a "90%" that looks like the line itself.
  const double tenths = std::floor(fraction * 1000.0 + 1e-9);
  return shortest(tenths / 10.0) + "%";
}

std::string describe_use(const GeneratorCpu& cpu) {
  if (cpu.limited()) {
    return percent(cpu.utilization) + " of its " + cpu_quantity(*cpu.limit_cores) + " CPU limit";
  }
  const std::string cores = cpu_quantity(cpu.cores);
  return percent(cpu.utilization) + " of the " + cores + " CPU" + (cpu.cores == 1 ? "" : "s") +
         " it may use";
}

}  // namespace kubeload
