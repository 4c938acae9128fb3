#pragma once
// Where a worker pod finds the rows of a data source that comes from a
// ConfigMap or Secret key (spec.data[].configMapKeyRef / secretKeyRef,
// DataSourceSpec::from): the operator mounts the key there, read-only, one
// directory per source (a volume needs a directory of its own), and the
// worker reads the file there. Defined once for both.

#include <string>
#include <string_view>

namespace kubeload {

inline constexpr std::string_view kDataMountRoot = "/var/run/kubeload/data";
// The file's name in its source's directory, whatever the key is called: the
// worker needs only the source's name to find it.
inline constexpr std::string_view kDataFileName = "rows";

// /var/run/kubeload/data/<source>
inline std::string data_mount_directory(std::string_view source_name) {
  return std::string(kDataMountRoot) + "/" + std::string(source_name);
}
// /var/run/kubeload/data/<source>/rows
inline std::string data_mount_file(std::string_view source_name) {
  return data_mount_directory(source_name) + "/" + std::string(kDataFileName);
}

}  // namespace kubeload
