#include "operator/job_builder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "kubeload/data_mount.hpp"
#include "kubeload/names.hpp"
#include "kubeload/rfc3339.hpp"
#include "kubeload/text.hpp"
#include "operator/labels.hpp"
#include "operator/run_timing.hpp"

namespace kubeload::controller {
namespace {

using nlohmann::json;

constexpr std::string_view kJobSuffix = "-workers";
constexpr size_t kMaxJobName = 59;  // see worker_job_name
constexpr std::string_view kDefaultApiVersion = api::kApiVersion;
constexpr int kWorkerUser = 65532;  // the kubeload image's user (Dockerfile)

bool is_label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

const std::string& required(const std::string& value, const char* path) {
  if (value.empty()) {
    throw std::invalid_argument(std::string(path) + " is required to build the worker Job");
  }
  return value;
}

// A volume of one key of a Secret or ConfigMap, as the file `path`: read by
// the kubelet, never by the operator.
json key_volume(std::string_view volume, const ObjectKeyRef& ref, std::string_view path) {
  const json items = json::array({{{"key", ref.key}, {"path", std::string(path)}}});
  json out = {{"name", std::string(volume)}};
  if (ref.kind == ObjectKeyRef::Kind::secret) {
    out["secret"] = {{"secretName", ref.name}, {"items", items}};
  } else {
    out["configMap"] = {{"name", ref.name}, {"items", items}};
  }
  return out;
}

// A CPU quantity ("2", "500m", "1.5", or a bare JSON number) in cores;
// nullopt for any other form, which then simply does not size the threads.
std::optional<double> cpu_cores(const json& quantity) {
  if (quantity.is_number()) return quantity.get<double>();
  if (!quantity.is_string()) return std::nullopt;
  std::string_view text = quantity.get_ref<const std::string&>();
  double scale = 1;
  if (!text.empty() && text.back() == 'm') {
    scale = 0.001;
    text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value * scale;
}

// One event-loop thread per core the pod may use: more threads than cores
// in a CPU-limited container get throttled, and throttling shows up as
// latency that the target never caused.
std::optional<uint32_t> worker_threads(const json& resources, const OperatorConfig& config) {
  if (config.worker_threads) return config.worker_threads;
  if (!resources.is_object()) return std::nullopt;
  for (const char* kind : {"limits", "requests"}) {
    const json section = resources.value(kind, json::object());
    if (!section.is_object() || !section.contains("cpu")) continue;
    const std::optional<double> cores = cpu_cores(section.at("cpu"));
    if (!cores || !std::isfinite(*cores) || *cores <= 0) return std::nullopt;
    return static_cast<uint32_t>(std::clamp(std::ceil(*cores), 1.0, 1024.0));
  }
  return std::nullopt;
}

std::string target_url(const LoadTestSpec& spec, const std::string& loadtest_namespace) {
  if (spec.url) return *spec.url;
  if (!spec.service) throw std::invalid_argument("spec.target: neither url nor service is set");
  const ServiceRef& service = *spec.service;
  const std::string& ns = service.namespace_.empty() ? loadtest_namespace : service.namespace_;
  return service.scheme + "://" + service.name + "." + ns + ".svc:" + std::to_string(service.port) +
         "/";
}

// What the worker parses: the manifest as written, minus everything in
// metadata but name, namespace and labels (annotations may hold anything,
// kubectl's last-applied copy included) and minus status.
json worker_manifest(const api::LoadTest& loadtest, const std::string& name,
                     const std::string& ns) {
  json metadata = {{"name", name}, {"namespace", ns}};
  if (!loadtest.metadata.labels.empty()) metadata["labels"] = loadtest.metadata.labels;
  return json{{"apiVersion", kDefaultApiVersion},
              {"kind", api::kKind},
              {"metadata", std::move(metadata)},
              {"spec", loadtest.spec.is_object() ? loadtest.spec : json::object()}};
}

json labels_for(const LoadTestSpec& spec, const std::string& name, const std::string& uid) {
  json labels = {{std::string(kLoadTestLabel), loadtest_label_value(name)},
                 {std::string(kLoadTestUidLabel), uid},
                 {std::string(kNameLabel), std::string(kWorkerName)},
                 {std::string(kManagedByLabel), std::string(kManagedBy)}};
  if (const auto test = spec.labels.find(std::string(kTestLabel)); test != spec.labels.end()) {
    labels[std::string(kTestLabel)] = test->second;
  }
  return labels;
}

// Copies workerTemplate.<key> to `to` when it is set and not empty: an empty
// map or list means the same as none, and leaving it out keeps the Job
// identical to one built from a LoadTest that never mentioned it.
void copy_if_set(const json& worker_template, const char* key, json& to) {
  if (!worker_template.is_object() || !worker_template.contains(key)) return;
  const json& value = worker_template.at(key);
  if (value.is_null() || ((value.is_object() || value.is_array()) && value.empty())) return;
  to[key] = value;
}

// spec.workerTemplate.resources as given, or, when unset or empty, the
// operator's defaults (never a mix: the spec's resources are the author's).
json worker_resources(const json& worker_template, const OperatorConfig& config) {
  if (worker_template.is_object() && worker_template.contains("resources")) {
    const json& given = worker_template.at("resources");
    if (given.is_object() && !given.empty()) return given;
  }
  json resources = json::object();
  if (!config.worker_default_requests.empty()) {
    resources["requests"] = config.worker_default_requests;
  }
  if (!config.worker_default_limits.empty()) resources["limits"] = config.worker_default_limits;
  return resources;
}

// The LoadTest as the controlling owner, so its deletion takes the object along.
json owner_reference(const api::LoadTest& loadtest) {
  return {{"apiVersion", kDefaultApiVersion},
          {"kind", api::kKind},
          {"name", required(loadtest.metadata.name, "metadata.name")},
          {"uid", required(loadtest.metadata.uid, "metadata.uid")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

// The LoadTest a run's objects are built for, as the API server always
// returns it (std::invalid_argument naming the field otherwise).
struct RunIdentity {
  std::string name;
  std::string ns;
  std::string uid;
};
RunIdentity run_identity(const api::LoadTest& loadtest) {
  const api::ObjectMeta& metadata = loadtest.metadata;
  return {required(metadata.name, "metadata.name"),
          required(metadata.namespace_, "metadata.namespace"),
          required(metadata.uid, "metadata.uid")};
}

// The metadata of an object the run owns besides its Job: in the LoadTest's
// namespace, with the run's labels, owned by the LoadTest (it goes with it).
json owned_object_metadata(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                           const RunIdentity& run, const std::string& object_name) {
  return {{"name", object_name},
          {"namespace", run.ns},
          {"labels", labels_for(spec, run.name, run.uid)},
          {"ownerReferences", json::array({owner_reference(loadtest)})}};
}

}  // namespace

std::string worker_job_name(std::string_view loadtest_name) {
  std::string plain = std::string(loadtest_name) + std::string(kJobSuffix);
  if (is_dns1123_label(loadtest_name) && plain.size() <= kMaxJobName) return plain;
  std::string sanitized(loadtest_name);
  std::replace_if(
      sanitized.begin(), sanitized.end(), [](char c) { return !is_label_char(c); }, '-');
  const size_t room = kMaxJobName - kJobSuffix.size() - 1 - kShortHashLength;
  std::string prefix = trim_trailing(sanitized.substr(0, room), "-");
  prefix.erase(0, prefix.find_first_not_of('-'));
  if (prefix.empty()) prefix = "lt";
  return prefix + "-" + short_hash(loadtest_name) + std::string(kJobSuffix);
}

std::string header_env_name(size_t ordinal) {
  return "KUBELOAD_HEADER_" + std::to_string(ordinal);
}

std::string data_volume_name(size_t source_index) {
  return "data-" + std::to_string(source_index);
}

std::string worker_token_secret_name(std::string_view loadtest_name, std::string_view uid) {
  return worker_job_name(loadtest_name) + "-token-" + std::string(uid.substr(0, 8));
}

json build_worker_token_secret(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                               const std::string& token) {
  const RunIdentity run = run_identity(loadtest);
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", owned_object_metadata(loadtest, spec, run,
                                                 worker_token_secret_name(run.name, run.uid))},
              {"type", "Opaque"},
              {"immutable", true},
              {"stringData", {{std::string(kWorkerTokenKey), token}}}};
}

std::string worker_spec_config_map_name(std::string_view loadtest_name, std::string_view uid) {
  return worker_job_name(loadtest_name) + "-spec-" + std::string(uid.substr(0, 8));
}

json build_worker_spec_config_map(const api::LoadTest& loadtest, const LoadTestSpec& spec) {
  const RunIdentity run = run_identity(loadtest);
  return json{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       owned_object_metadata(loadtest, spec, run, worker_spec_config_map_name(run.name, run.uid))},
      {"immutable", true},
      {"data", {{std::string(kSpecFileName), worker_manifest(loadtest, run.name, run.ns).dump()}}}};
}

std::string worker_network_policy_name(std::string_view loadtest_name, std::string_view uid) {
  return worker_job_name(loadtest_name) + "-" + std::string(uid.substr(0, 8));
}

bool worker_network_policy_wanted(const OperatorConfig& config) {
  return config.worker_ingress_from.is_array() || config.worker_egress_dns_to.is_array();
}

namespace {

bool inside(const Cidr& inner, const Cidr& outer) {
  return inner.network.v4 == outer.network.v4 && inner.prefix >= outer.prefix &&
         outer.contains(inner.network);
}

// A NetworkPolicy's ipBlock wants a CIDR with its host bits clear:
// "10.96.0.1" is 10.96.0.1/32, "10.0.0.1/8" is 10.0.0.0/8.
std::string canonical(const Cidr& cidr) {
  IpAddress network = cidr.network;
  int bits = cidr.prefix;
  for (auto& byte : network.bytes) {
    byte &= bits >= 8 ? 0xff : bits <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - bits));
    bits -= 8;
  }
  if (network.v4) std::fill(network.bytes.begin() + 4, network.bytes.end(), 0);
  return network.to_string() + "/" + std::to_string(cidr.prefix);
}

// Outside the cluster: what the allow list allows (anywhere when it is
// empty), less the denied ranges and the cluster's own, each family apart.
json outside_ip_blocks(const TargetPolicy& policy) {
  std::vector<Cidr> bases = policy.allow;
  if (bases.empty()) bases = {*Cidr::parse("0.0.0.0/0"), *Cidr::parse("::/0")};
  std::vector<Cidr> closed = policy.deny;
  closed.insert(closed.end(), policy.cluster_ranges.begin(), policy.cluster_ranges.end());
  json blocks = json::array();
  for (const Cidr& base : bases) {
    if (std::any_of(closed.begin(), closed.end(), [&](const Cidr& c) { return inside(base, c); })) {
      continue;  // all of it is denied
    }
    json except = json::array();
    for (const Cidr& c : closed) {
      const std::string text = canonical(c);
      if (inside(c, base) && std::find(except.begin(), except.end(), text) == except.end()) {
        except.push_back(text);
      }
    }
    json block = {{"cidr", canonical(base)}};
    if (!except.empty()) block["except"] = std::move(except);
    blocks.push_back({{"ipBlock", std::move(block)}});
  }
  return blocks;
}

// Egress: DNS, the target Service's pods (by its selector, in its
// namespace; an endpoint its selector did not choose by its address, as
// target_refusal allowed it), and outside the cluster.
json worker_egress(const OperatorConfig& config, const TargetServiceView* target) {
  json rules = json::array();
  rules.push_back({{"to", config.worker_egress_dns_to},
                   {"ports", json::array({{{"protocol", "UDP"}, {"port", 53}},
                                          {{"protocol", "TCP"}, {"port", 53}}})}});
  const TargetPolicy policy = target_policy_of(config);
  if (target && target->found) {
    json to = json::array();
    if (!target->selector.empty()) {
      to.push_back({{"namespaceSelector",
                     {{"matchLabels", {{"kubernetes.io/metadata.name", target->host.namespace_}}}}},
                    {"podSelector", {{"matchLabels", target->selector}}}});
    }
    for (const ServiceEndpoint& endpoint : target->endpoints) {
      if (endpoint.chosen_by_selector && !target->selector.empty()) continue;
      if (const auto address = IpAddress::parse(endpoint.address)) {
        const Cidr single{*address, address->v4 ? 32 : 128, endpoint.address};
        to.push_back({{"ipBlock", {{"cidr", canonical(single)}}}});
      }
    }
    if (!to.empty()) rules.push_back({{"to", std::move(to)}});
  }
  if (json outside = outside_ip_blocks(policy); !outside.empty()) {
    rules.push_back({{"to", std::move(outside)}});
  }
  return rules;
}

}  // namespace

json build_worker_network_policy(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                 const OperatorConfig& config, const TargetServiceView* target) {
  const RunIdentity run = run_identity(loadtest);
  json policy_types = json::array();
  json policy_spec = {
      {"podSelector", {{"matchLabels", {{std::string(kLoadTestUidLabel), run.uid}}}}}};
  if (config.worker_ingress_from.is_array()) {
    policy_types.push_back("Ingress");
    policy_spec["ingress"] = json::array(
        {{{"from", config.worker_ingress_from},
          {"ports", json::array({{{"protocol", "TCP"}, {"port", config.worker_port}}})}}});
  }
  if (config.worker_egress_dns_to.is_array()) {
    policy_types.push_back("Egress");
    policy_spec["egress"] = worker_egress(config, target);
  }
  policy_spec["policyTypes"] = std::move(policy_types);
  return json{{"apiVersion", "networking.k8s.io/v1"},
              {"kind", "NetworkPolicy"},
              {"metadata", owned_object_metadata(loadtest, spec, run,
                                                 worker_network_policy_name(run.name, run.uid))},
              {"spec", std::move(policy_spec)}};
}

json build_worker_job(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                      const OperatorConfig& config,
                      const std::vector<DecidedDestination>& decided) {
  const auto [name, ns, uid] = run_identity(loadtest);
  const json worker_template = loadtest.spec.is_object()
                                   ? loadtest.spec.value("workerTemplate", json::object())
                                   : json::object();

  json env = json::array();
  // The run's token, by reference like the headers below: never in the Job itself.
  env.push_back({{"name", kWorkerTokenEnv},
                 {"valueFrom",
                  {{"secretKeyRef",
                    {{"name", worker_token_secret_name(name, uid)},
                     {"key", std::string(kWorkerTokenKey)}}}}}});

  // The worker names its run in every /result, so a document from another
  // run's worker (a reused pod IP) is never merged into this one.
  env.push_back({{"name", std::string(kLoadTestUidEnv)}, {"value", uid}});
  // Secrets travel by reference only: the kubelet resolves them into the
  // worker's environment, so their values are never in the Job, the
  // LoadTest or the operator's memory.
  size_t ordinal = 0;
  for (const RequestSpec& request : spec.requests) {
    for (const HeaderFrom& header : request.headers_from) {
      env.push_back(
          {{"name", header_env_name(ordinal++)},
           {"valueFrom",
            {{"secretKeyRef",
              {{"name", header.secret_key_ref.name}, {"key", header.secret_key_ref.key}}}}}});
    }
  }

  json args = {"worker",
               "--spec",
               std::string(kSpecMountPath) + "/" + std::string(kSpecFileName),
               "--workers",
               std::to_string(spec.workers),
               "--listen",
               "0.0.0.0:" + std::to_string(config.worker_port),
               "--target",
               target_url(spec, ns)};
  // The worker decides every resolved target address against the admin's policy.
  args.push_back("--guard-targets");
  for (const std::string& cidr : config.target_deny_cidrs) {
    args.push_back("--deny-cidr");
    args.push_back(cidr);
  }
  for (const std::string& cidr : config.target_allow_cidrs) {
    args.push_back("--allow-cidr");
    args.push_back(cidr);
  }
  for (const std::string& host : config.target_deny_hosts) {
    args.push_back("--deny-host");
    args.push_back(host);
  }
  // The cluster's ranges, and the target Service's addresses with what is
  // behind them (target_destinations.hpp): the only cluster addresses the
  // worker may load.
  for (const std::string& cidr : config.cluster_cidrs) {
    args.push_back("--cluster-cidr");
    args.push_back(cidr);
  }
  for (const DecidedDestination& destination : decided) {
    args.push_back("--decided-destination");
    args.push_back(format_decided_destination(destination));
  }
  // spec.target.tls.caFrom: the bundle is mounted from its Secret or
  // ConfigMap by the kubelet (the operator never reads it) and given to
  // loadgen as --cacert.
  json ca_volume;
  if (spec.tls.ca_from) {
    ca_volume = key_volume(kCaVolume, *spec.tls.ca_from, kCaFileName);
    args.push_back("--cacert");
    args.push_back(std::string(kCaMountPath) + "/" + std::string(kCaFileName));
  }
  const json resources = worker_resources(worker_template, config);
  if (const auto threads = worker_threads(resources, config)) {
    args.push_back("-t");
    args.push_back(std::to_string(*threads));
  }

  json container = {
      {"name", std::string(kContainerName)},
      {"image",
       spec.worker_template.image.empty() ? config.loadgen_image : spec.worker_template.image},
      {"imagePullPolicy", config.image_pull_policy},
      {"command", json::array({std::string(kWorkerCommand)})},
      {"args", std::move(args)},
      {"env", std::move(env)},
      {"ports",
       json::array(
           {{{"name", "http"}, {"containerPort", config.worker_port}, {"protocol", "TCP"}}})},
      // A short period: the run starts when the last worker turns ready,
      // so every second of probe period is a second of waiting.
      {"readinessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", "http"}}}, {"periodSeconds", 1}}},
      // The worker writes its headline numbers there, and nothing else may
      // reach the status: a log tail (FallbackToLogsOnError) could carry a
      // request's headers or a target's answers into the LoadTest and Events.
      {"terminationMessagePolicy", "File"},
      // Pod Security Standards "restricted": a load generator needs no
      // privilege and writes nothing but its termination message.
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", json::array({"ALL"})}}}}}};
  if (!resources.empty()) container["resources"] = resources;
  json mounts = json::array({{{"name", std::string(kSpecVolume)},
                              {"mountPath", std::string(kSpecMountPath)},
                              {"readOnly", true}}});
  if (!ca_volume.is_null()) {
    mounts.push_back({{"name", std::string(kCaVolume)},
                      {"mountPath", std::string(kCaMountPath)},
                      {"readOnly", true}});
  }
  // spec.data: each source from a ConfigMap or Secret key, mounted the same
  // way at the path the worker reads it from (kubeload/data_mount.hpp); a
  // Secret's owner has consented before the Job exists (secret_consent.hpp).
  json data_volumes = json::array();
  for (size_t i = 0; i < spec.data.size(); ++i) {
    const DataSourceSpec& source = spec.data[i];
    if (!source.from) continue;
    data_volumes.push_back(key_volume(data_volume_name(i), *source.from, kDataFileName));
    mounts.push_back({{"name", data_volume_name(i)},
                      {"mountPath", data_mount_directory(source.name)},
                      {"readOnly", true}});
  }
  container["volumeMounts"] = std::move(mounts);

  const json labels = labels_for(spec, name, uid);
  json pod_spec = {{"restartPolicy", "Never"},
                   {"automountServiceAccountToken", false},
                   // A fixed non-root user, so that any workerTemplate.image runs
                   // the same way (the kubeload image's own user is 65532 too).
                   {"securityContext",
                    {{"runAsNonRoot", true},
                     {"runAsUser", kWorkerUser},
                     {"runAsGroup", kWorkerUser},
                     {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
                   {"containers", json::array({std::move(container)})}};
  if (!config.service_account.empty()) pod_spec["serviceAccountName"] = config.service_account;
  json volumes = json::array({{{"name", std::string(kSpecVolume)},
                               {"configMap", {{"name", worker_spec_config_map_name(name, uid)}}}}});
  if (!ca_volume.is_null()) volumes.push_back(std::move(ca_volume));
  for (json& volume : data_volumes) volumes.push_back(std::move(volume));
  pod_spec["volumes"] = std::move(volumes);
  copy_if_set(worker_template, "nodeSelector", pod_spec);
  copy_if_set(worker_template, "tolerations", pod_spec);
  copy_if_set(worker_template, "affinity", pod_spec);

  json owner = owner_reference(loadtest);

  json job{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"metadata",
            {{"name", worker_job_name(name)},
             {"namespace", ns},
             {"labels", labels},
             {"ownerReferences", json::array({std::move(owner)})}}},
           {"spec",
            {{"completionMode", "Indexed"},
             {"completions", spec.workers},
             {"parallelism", spec.workers},
             // A worker that fails is a failed run: a replacement would start
             // late and alone, and its share would not be the one measured.
             {"backoffLimit", 0},
             // The backstop of every deadline: the Job controller stops the pods
             // even when no operator is running.
             {"activeDeadlineSeconds", job_active_deadline_seconds(spec)},
             {"template", {{"metadata", {{"labels", labels}}}, {"spec", std::move(pod_spec)}}}}}};
  // A Job the policy keeps (a failed run's, under OnSuccess) goes after a
  // while; Never means never.
  if (spec.cleanup != CleanupPolicy::Never) {
    job["spec"]["ttlSecondsAfterFinished"] = config.kept_job_ttl_seconds;
  }
  return job;
}

json build_scheduled_loadtest(const api::LoadTestSchedule& schedule, api::Time scheduled_at) {
  const api::ObjectMeta& meta = schedule.metadata;
  const std::string& name = required(meta.name, "metadata.name");
  json labels = schedule.spec.template_.labels;
  labels[std::string(api::kScheduleLabel)] = loadtest_label_value(name);
  if (!labels.contains(std::string(kTestLabel))) {
    labels[std::string(kTestLabel)] = loadtest_label_value(name);
  }
  json annotations = schedule.spec.template_.annotations;
  annotations[std::string(api::kScheduledAtAnnotation)] =
      rfc3339::format(api::whole_seconds(scheduled_at));
  const json owner = {{"apiVersion", kDefaultApiVersion},
                      {"kind", api::kScheduleKind},
                      {"name", name},
                      {"uid", required(meta.uid, "metadata.uid")},
                      {"controller", true},
                      {"blockOwnerDeletion", true}};
  const json& spec = schedule.spec.template_.spec;
  return {{"apiVersion", kDefaultApiVersion},
          {"kind", api::kKind},
          {"metadata",
           {{"generateName", name + "-"},
            {"namespace", required(meta.namespace_, "metadata.namespace")},
            {"labels", std::move(labels)},
            {"annotations", std::move(annotations)},
            {"ownerReferences", json::array({owner})}}},
          {"spec", spec.is_object() ? spec : json::object()}};
}

std::string round_loadtest_name(std::string_view experiment, std::string_view variant,
                                uint64_t round) {
  const std::string tail = "-" + std::string(variant) + "-" + std::to_string(round);
  std::string plain = std::string(experiment) + tail;
  if (plain.size() <= kMaxObjectName) return plain;
  const std::string hash = short_hash(experiment);
  const size_t room = kMaxObjectName - tail.size() - 1 - hash.size();
  return trim_trailing(std::string(experiment.substr(0, room)), "-.") + "-" + hash + tail;
}

json build_round_loadtest(const api::LoadTest& experiment, std::size_t variant_index,
                          uint64_t round) {
  const api::ObjectMeta& meta = experiment.metadata;
  const std::string& name = required(meta.name, "metadata.name");
  const json variants =
      experiment.spec.is_object() ? experiment.spec.value("variants", json()) : json();
  if (!variants.is_array() || variant_index >= variants.size() ||
      !variants[variant_index].is_object()) {
    throw std::invalid_argument("spec.variants[" + std::to_string(variant_index) +
                                "]: not in the experiment's spec");
  }
  const json& variant = variants[variant_index];
  const std::string variant_name = variant.value("name", "");

  json spec = experiment.spec;
  for (const char* only_the_experiments :
       {"variants", "experiment", "thresholds", "baseline", "ttlSecondsAfterFinished"}) {
    spec.erase(only_the_experiments);
  }
  json target = spec.value("target", json::object());
  for (const char* variants_own : {"url", "service", "podSelector"}) target.erase(variants_own);
  const json variant_target = variant.value("target", json::object());
  for (const auto& [key, value] : variant_target.items()) target[key] = value;
  spec["target"] = std::move(target);
  if (const json headers = variant.value("headers", json::object()); !headers.empty()) {
    json requests = spec.value("requests", json::array());
    // No requests is one implicit request (GET /, kubeload/spec.hpp): it
    // needs the headers too, so it is written out.
    if (requests.empty()) requests.push_back({{"name", "default"}});
    for (json& request : requests) {
      if (!request.is_object()) continue;
      json merged = request.value("headers", json::object());
      for (const auto& [key, value] : headers.items()) merged[key] = value;
      request["headers"] = std::move(merged);
    }
    spec["requests"] = std::move(requests);
  }

  json labels = meta.labels;
  const auto test = meta.labels.find(std::string(kTestLabel));
  labels[std::string(kTestLabel)] =
      loadtest_label_value((test != meta.labels.end() ? test->second : name) + "-" + variant_name);
  labels[std::string(api::kExperimentLabel)] = loadtest_label_value(name);
  labels[std::string(api::kVariantLabel)] = variant_name;
  labels[std::string(api::kRoundLabel)] = std::to_string(round);
  json metadata = {{"name", round_loadtest_name(name, variant_name, round)},
                   {"namespace", required(meta.namespace_, "metadata.namespace")},
                   {"labels", std::move(labels)},
                   {"ownerReferences", json::array({owner_reference(experiment)})}};
  if (!meta.annotations.empty()) {
    // The revision CI set names what the experiment tested; the rounds tested the same.
    json annotations = json::object();
    for (const auto& [key, value] : meta.annotations) {
      if (key == api::kRevisionAnnotation) annotations[key] = value;
    }
    if (!annotations.empty()) metadata["annotations"] = std::move(annotations);
  }
  return {{"apiVersion", kDefaultApiVersion},
          {"kind", api::kKind},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)}};
}

std::string step_loadtest_name(std::string_view search, uint64_t step) {
  return round_loadtest_name(search, "step", step);
}

json build_step_loadtest(const api::LoadTest& search, uint64_t step, double value) {
  const api::ObjectMeta& meta = search.metadata;
  const std::string& name = required(meta.name, "metadata.name");
  const json& search_spec = search.spec.is_object() ? search.spec.value("search", json()) : json();
  if (!search_spec.is_object())
    throw std::invalid_argument("spec.search: not in the search's spec");

  json spec = search.spec;
  for (const char* only_the_searchs : {"search", "ttlSecondsAfterFinished"}) {
    spec.erase(only_the_searchs);
  }
  json load = spec.value("load", json::object());
  if (search_spec.contains("connections")) {
    load["connections"] = static_cast<uint64_t>(value);
  } else {
    load["rate"] = value;
  }
  spec["load"] = std::move(load);

  json labels = meta.labels;
  const auto test = meta.labels.find(std::string(kTestLabel));
  labels[std::string(kTestLabel)] =
      loadtest_label_value((test != meta.labels.end() ? test->second : name) + "-search");
  labels[std::string(api::kSearchLabel)] = loadtest_label_value(name);
  labels[std::string(api::kStepLabel)] = std::to_string(step);
  json metadata = {{"name", step_loadtest_name(name, step)},
                   {"namespace", required(meta.namespace_, "metadata.namespace")},
                   {"labels", std::move(labels)},
                   {"ownerReferences", json::array({owner_reference(search)})}};
  if (const auto revision = meta.annotations.find(std::string(api::kRevisionAnnotation));
      revision != meta.annotations.end()) {
    // The revision CI set names what the search tested; the steps tested the same.
    metadata["annotations"] = {{revision->first, revision->second}};
  }
  return {{"apiVersion", kDefaultApiVersion},
          {"kind", api::kKind},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)}};
}

}  // namespace kubeload::controller
