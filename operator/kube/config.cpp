#include "operator/kube/config.hpp"

#include "kubeload/base64.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace kubeload::kube {

namespace {

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(what + ": cannot read " + path + " (" + std::strerror(errno) + ")");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

std::string scalar(const YAML::Node& n, const char* key, const std::string& where) {
  const YAML::Node v = n[key];
  if (!v) return {};
  if (!v.IsScalar()) throw ConfigError(where + ": field " + key + " must be a string");
  return v.as<std::string>();
}

// Finds `name` in a kubeconfig list such as clusters: [{name, cluster: {...}}].
YAML::Node named_entry(const YAML::Node& root, const char* list, const char* inner,
                       const std::string& name, const std::string& where) {
  const YAML::Node items = root[list];
  if (items && !items.IsSequence())
    throw ConfigError(where + ": field " + list + " must be a list");
  if (items) {
    for (const auto& item : items) {
      if (item["name"] && item["name"].as<std::string>() == name) {
        const YAML::Node body = item[inner];
        if (!body || !body.IsMap()) {
          throw ConfigError(where + ": " + list + " entry \"" + name + "\" has no " + inner);
        }
        return body;
      }
    }
  }
  throw ConfigError(where + ": " + std::string(inner) + " \"" + name + "\" not found in " + list);
}

// A PEM value that may come inline (*-data, base64) or from a file.
std::string pem_from(const YAML::Node& n, const char* file_key, const char* data_key,
                     const std::string& where, const std::string& base_dir) {
  const std::string data = scalar(n, data_key, where);
  if (!data.empty()) return base64_decode(data, where + ": field " + data_key);
  const std::string file = scalar(n, file_key, where);
  if (!file.empty()) return read_file(resolve(file, base_dir), where + ": field " + file_key);
  return {};
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string base64_decode(const std::string& in, const std::string& what) {
  // kubeconfigs are hand-edited: line breaks inside the data and missing
  // padding are common, so both are forgiven before the strict decoder runs.
  std::string text;
  text.reserve(in.size() + 2);
  for (char c : in) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') text.push_back(c);
  }
  if (text.empty()) return {};
  if (text.size() % 4 == 1) throw ConfigError(what + ": not valid base64 (truncated)");
  if (text.size() % 4 != 0) text.append(4 - text.size() % 4, '=');
  try {
    const std::vector<uint8_t> bytes = kubeload::base64_decode(text);
    return std::string(bytes.begin(), bytes.end());
  } catch (const std::invalid_argument& e) {
    throw ConfigError(what + ": not valid base64 (" + e.what() + ")");
  }
}

ClusterConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source_name,
                               const std::string& base_dir, const std::string& context) {
  const std::string where = "kubeconfig " + source_name;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) throw ConfigError(where + ": not a kubeconfig (expected a mapping)");

  try {
    std::string ctx_name = context;
    if (ctx_name.empty()) ctx_name = scalar(root, "current-context", where);
    if (ctx_name.empty()) throw ConfigError(where + ": field current-context is missing or empty");
    const YAML::Node ctx = named_entry(root, "contexts", "context", ctx_name, where);
    const std::string ctx_where = where + ": context \"" + ctx_name + "\"";
    const std::string cluster_name = scalar(ctx, "cluster", ctx_where);
    if (cluster_name.empty()) throw ConfigError(ctx_where + ": field cluster is missing");
    const std::string user_name = scalar(ctx, "user", ctx_where);

    ClusterConfig cfg;
    cfg.source = source_name + " (context " + ctx_name + ")";
    if (auto ns = scalar(ctx, "namespace", ctx_where); !ns.empty()) cfg.default_namespace = ns;

    const YAML::Node cluster = named_entry(root, "clusters", "cluster", cluster_name, where);
    const std::string cl_where = where + ": cluster \"" + cluster_name + "\"";
    cfg.server = scalar(cluster, "server", cl_where);
    if (cfg.server.empty()) throw ConfigError(cl_where + ": field server is missing");
    if (cfg.server.rfind("https://", 0) != 0 && cfg.server.rfind("http://", 0) != 0) {
      throw ConfigError(cl_where + ": field server must start with https:// or http://, got \"" +
                        cfg.server + "\"");
    }
    cfg.ca_pem = pem_from(cluster, "certificate-authority", "certificate-authority-data", cl_where,
                          base_dir);
    if (cluster["insecure-skip-tls-verify"]) {
      cfg.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>();
    }

    if (!user_name.empty()) {
      const YAML::Node user = named_entry(root, "users", "user", user_name, where);
      const std::string u_where = where + ": user \"" + user_name + "\"";
      cfg.client_cert_pem =
          pem_from(user, "client-certificate", "client-certificate-data", u_where, base_dir);
      cfg.client_key_pem = pem_from(user, "client-key", "client-key-data", u_where, base_dir);
      if (!cfg.client_cert_pem.empty() && cfg.client_key_pem.empty()) {
        throw ConfigError(
            u_where + ": client-certificate is set but client-key / client-key-data is missing");
      }
      if (cfg.client_cert_pem.empty() && !cfg.client_key_pem.empty()) {
        throw ConfigError(u_where +
                          ": client-key is set but client-certificate / client-certificate-data "
                          "is missing");
      }
      cfg.token = scalar(user, "token", u_where);
      if (auto tf = scalar(user, "tokenFile", u_where); !tf.empty()) {
        cfg.token_file = resolve(tf, base_dir);
        // Read once now so a wrong path fails at startup, not on the first request.
        if (cfg.token.empty())
          cfg.token = trim(read_file(cfg.token_file, u_where + ": field tokenFile"));
      }
      for (const char* unsupported : {"exec", "auth-provider", "username"}) {
        if (user[unsupported] && cfg.client_cert_pem.empty() && cfg.token.empty()) {
          throw ConfigError(u_where + ": field " + unsupported +
                            " is not supported; use client certificates or a token");
        }
      }
    }
    return cfg;
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + ": " + e.what());
  }
}

ClusterConfig load_kubeconfig_file(const std::string& path, const std::string& context) {
  const std::string text = read_file(path, "kubeconfig");
  return parse_kubeconfig(text, path, std::filesystem::path(path).parent_path().string(), context);
}

ClusterConfig load_in_cluster(const InClusterSource& src) {
  auto env = [&](const char* name) -> std::optional<std::string> {
    if (src.getenv) return src.getenv(name);
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto host = env("KUBERNETES_SERVICE_HOST");
  const auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    throw ConfigError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  ClusterConfig cfg;
  cfg.source = "in-cluster";
  // An IPv6 service address needs brackets in a URL.
  const bool v6 = host->find(':') != std::string::npos;
  cfg.server = "https://" + (v6 ? "[" + *host + "]" : *host) + ":" + *port;
  cfg.token_file = src.sa_dir + "/token";
  cfg.token = trim(read_file(cfg.token_file, "in-cluster config: service-account token"));
  if (cfg.token.empty()) throw ConfigError("in-cluster config: " + cfg.token_file + " is empty");
  cfg.ca_pem = read_file(src.sa_dir + "/ca.crt", "in-cluster config: service-account CA");
  if (std::ifstream ns(src.sa_dir + "/namespace"); ns) {
    std::string n;
    std::getline(ns, n);
    if (!trim(n).empty()) cfg.default_namespace = trim(n);
  }
  return cfg;
}

ClusterConfig load_config(const std::string& kubeconfig_flag, const std::string& context) {
  if (!kubeconfig_flag.empty()) return load_kubeconfig_file(kubeconfig_flag, context);
  if (const char* kc = std::getenv("KUBECONFIG"); kc && *kc) {
    // kubectl merges every file in the list; the operator only needs one
    // cluster, so the first file that exists is used.
    std::stringstream ss(kc);
    std::string item;
    while (std::getline(ss, item, ':')) {
      if (!item.empty() && std::filesystem::exists(item)) {
        return load_kubeconfig_file(item, context);
      }
    }
    throw ConfigError(std::string("KUBECONFIG=") + kc + ": none of its files exist");
  }
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST"); h && *h && context.empty()) {
    return load_in_cluster();
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    const std::string p = std::string(home) + "/.kube/config";
    if (std::filesystem::exists(p)) return load_kubeconfig_file(p, context);
  }
  throw ConfigError(
      "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, run in a pod, or create "
      "~/.kube/config");
}

BearerToken::BearerToken(const ClusterConfig& cfg, std::chrono::seconds refresh)
    : token_(cfg.token), file_(cfg.token_file), refresh_(refresh) {
  if (!file_.empty()) read_at_ = std::chrono::steady_clock::now();
}

std::string BearerToken::current() {
  std::lock_guard lock(mu_);
  if (!file_.empty() && std::chrono::steady_clock::now() - read_at_ >= refresh_) {
    read_at_ = std::chrono::steady_clock::now();
    std::ifstream in(file_, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      if (auto t = trim(ss.str()); !t.empty()) token_ = std::move(t);
    }
  }
  return token_;
}

}  // namespace kubeload::kube
