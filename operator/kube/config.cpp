#include "operator/kube/config.hpp"

#include "kubeload/base64.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

// One named entry of a kubeconfig list (clusters, users, contexts), with the
// file it came from: its paths resolve against that file's directory.
struct Entry {
  YAML::Node body;
  std::string base_dir;
  std::string where;  // "kubeconfig /path"
};

// Kubeconfig files merged by kubectl's rules: the first file to define a
// name, or to set current-context, wins.
struct MergedKubeconfig {
  std::string current_context;
  std::map<std::string, Entry> clusters, users, contexts;
};

void merge_list(const YAML::Node& root, const char* list, const char* inner,
                const std::string& where, const std::string& base_dir,
                std::map<std::string, Entry>& into) {
  const YAML::Node items = root[list];
  if (!items || items.IsNull()) return;
  if (!items.IsSequence()) throw ConfigError(where + ": field " + list + " must be a list");
  for (const auto& item : items) {
    const std::string name = scalar(item, "name", where + ": " + list + " entry");
    const YAML::Node body = item[inner];
    if (!body || !body.IsMap()) {
      throw ConfigError(where + ": " + list + " entry \"" + name + "\" has no " + inner);
    }
    into.try_emplace(name, Entry{body, base_dir, where});
  }
}

void merge_kubeconfig(MergedKubeconfig& merged, const std::string& yaml_text,
                      const std::string& where, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + ": not valid YAML: " + e.what());
  }
  if (root.IsNull()) return;  // an empty file adds nothing, as in kubectl
  if (!root.IsMap()) throw ConfigError(where + ": not a kubeconfig (expected a mapping)");
  try {
    if (merged.current_context.empty())
      merged.current_context = scalar(root, "current-context", where);
    merge_list(root, "clusters", "cluster", where, base_dir, merged.clusters);
    merge_list(root, "users", "user", where, base_dir, merged.users);
    merge_list(root, "contexts", "context", where, base_dir, merged.contexts);
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + ": " + e.what());
  }
}

const Entry& named_entry(const std::map<std::string, Entry>& entries, const char* list,
                         const char* inner, const std::string& name, const std::string& where) {
  const auto it = entries.find(name);
  if (it == entries.end()) {
    throw ConfigError(where + ": " + std::string(inner) + " \"" + name + "\" not found in " + list);
  }
  return it->second;
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

namespace {

bool boolean(const YAML::Node& n, const char* key, const std::string& where) {
  const YAML::Node v = n[key];
  if (!v) return false;
  bool value = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, value)) {
    throw ConfigError(where + ": field " + key + " must be true or false");
  }
  return value;
}

constexpr const char* kExecV1 = "client.authentication.k8s.io/v1";
constexpr const char* kExecV1beta1 = "client.authentication.k8s.io/v1beta1";

// users[].user.exec, checked as client-go's validation does; each error names
// the field.
ExecConfig parse_exec(const YAML::Node& exec, const std::string& where,
                      const std::string& base_dir) {
  if (!exec.IsMap()) throw ConfigError(where + ": field exec must be a mapping");
  ExecConfig out;
  out.command = scalar(exec, "command", where + ": exec");
  if (out.command.empty()) throw ConfigError(where + ": field exec.command is missing");
  // kubectl resolves a command that holds a '/' against the kubeconfig's
  // directory; a bare name is looked up in PATH when it runs.
  if (out.command.find('/') != std::string::npos) out.command = resolve(out.command, base_dir);
  out.api_version = scalar(exec, "apiVersion", where + ": exec");
  if (out.api_version != kExecV1 && out.api_version != kExecV1beta1) {
    throw ConfigError(where + ": field exec.apiVersion must be " + kExecV1 + " or " + kExecV1beta1 +
                      ", got \"" + out.api_version + "\"");
  }
  if (const YAML::Node args = exec["args"]; args && !args.IsNull()) {
    if (!args.IsSequence())
      throw ConfigError(where + ": field exec.args must be a list of strings");
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsScalar()) {
        throw ConfigError(where + ": field exec.args[" + std::to_string(i) + "] must be a string");
      }
      out.args.push_back(args[i].as<std::string>());
    }
  }
  if (const YAML::Node env = exec["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) throw ConfigError(where + ": field exec.env must be a list");
    for (std::size_t i = 0; i < env.size(); ++i) {
      const std::string at = where + ": field exec.env[" + std::to_string(i) + "]";
      if (!env[i].IsMap()) throw ConfigError(at + " must be a mapping with name and value");
      const std::string name = scalar(env[i], "name", at);
      if (name.empty() || name.find('=') != std::string::npos) {
        throw ConfigError(at + ".name must be a non-empty name without '=', got \"" + name + "\"");
      }
      out.env.emplace_back(name, scalar(env[i], "value", at));
    }
  }
  const std::string mode = scalar(exec, "interactiveMode", where + ": exec");
  if (mode == "Never") {
    out.interactive_mode = InteractiveMode::Never;
  } else if (mode == "IfAvailable") {
    out.interactive_mode = InteractiveMode::IfAvailable;
  } else if (mode == "Always") {
    out.interactive_mode = InteractiveMode::Always;
  } else if (mode.empty() && out.api_version == kExecV1beta1) {
    out.interactive_mode = InteractiveMode::IfAvailable;  // client-go's default for v1beta1
  } else if (mode.empty()) {
    throw ConfigError(where + ": field exec.interactiveMode must be set with apiVersion " +
                      kExecV1 + " (Never, IfAvailable or Always)");
  } else {
    throw ConfigError(where +
                      ": field exec.interactiveMode must be Never, IfAvailable or Always, got \"" +
                      mode + "\"");
  }
  out.provide_cluster_info = boolean(exec, "provideClusterInfo", where + ": exec");
  out.install_hint = scalar(exec, "installHint", where + ": exec");
  return out;
}

// kubectl (>= 1.26) dropped the in-tree auth providers; each has an exec
// plugin that replaces it.
std::string auth_provider_replacement(const std::string& provider) {
  if (provider == "gcp") return "gke-gcloud-auth-plugin";
  if (provider == "azure") return "kubelogin (github.com/Azure/kubelogin)";
  if (provider == "oidc") return "kubelogin (kubectl oidc-login, github.com/int128/kubelogin)";
  return "your provider's exec credential plugin";
}

ClusterConfig resolve_context(const MergedKubeconfig& merged, const std::string& source_name,
                              const std::string& context) {
  const std::string where = "kubeconfig " + source_name;
  try {
    std::string ctx_name = context;
    if (ctx_name.empty()) ctx_name = merged.current_context;
    if (ctx_name.empty()) throw ConfigError(where + ": field current-context is missing or empty");
    const Entry& ctx = named_entry(merged.contexts, "contexts", "context", ctx_name, where);
    const std::string ctx_where = ctx.where + ": context \"" + ctx_name + "\"";
    const std::string cluster_name = scalar(ctx.body, "cluster", ctx_where);
    if (cluster_name.empty()) throw ConfigError(ctx_where + ": field cluster is missing");
    const std::string user_name = scalar(ctx.body, "user", ctx_where);

    ClusterConfig cfg;
    cfg.source = source_name + " (context " + ctx_name + ")";
    if (auto ns = scalar(ctx.body, "namespace", ctx_where); !ns.empty()) cfg.default_namespace = ns;

    const Entry& cl = named_entry(merged.clusters, "clusters", "cluster", cluster_name, where);
    const YAML::Node& cluster = cl.body;
    const std::string cl_where = cl.where + ": cluster \"" + cluster_name + "\"";
    cfg.server = scalar(cluster, "server", cl_where);
    if (cfg.server.empty()) throw ConfigError(cl_where + ": field server is missing");
    if (cfg.server.rfind("https://", 0) != 0 && cfg.server.rfind("http://", 0) != 0) {
      throw ConfigError(cl_where + ": field server must start with https:// or http://, got \"" +
                        cfg.server + "\"");
    }
    cfg.ca_pem = pem_from(cluster, "certificate-authority", "certificate-authority-data", cl_where,
                          cl.base_dir);
    cfg.insecure_skip_tls_verify = boolean(cluster, "insecure-skip-tls-verify", cl_where);
    cfg.tls_server_name = scalar(cluster, "tls-server-name", cl_where);
    cfg.proxy_url = scalar(cluster, "proxy-url", cl_where);
    if (!cfg.proxy_url.empty() && cfg.proxy_url.rfind("http://", 0) != 0) {
      // cpprestsdk speaks to a proxy in clear text only (CONNECT for https).
      throw ConfigError(cl_where + ": field proxy-url must be an http:// proxy, got \"" +
                        cfg.proxy_url + "\" (https and socks5 proxies are not supported)");
    }

    if (!user_name.empty()) {
      const Entry& u = named_entry(merged.users, "users", "user", user_name, where);
      const YAML::Node& user = u.body;
      const std::string u_where = u.where + ": user \"" + user_name + "\"";
      cfg.client_cert_pem =
          pem_from(user, "client-certificate", "client-certificate-data", u_where, u.base_dir);
      cfg.client_key_pem = pem_from(user, "client-key", "client-key-data", u_where, u.base_dir);
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
        cfg.token_file = resolve(tf, u.base_dir);
        // Read once now so a wrong path fails at startup, not on the first request.
        if (cfg.token.empty())
          cfg.token = trim(read_file(cfg.token_file, u_where + ": field tokenFile"));
      }
      const bool has_exec = user["exec"] && !user["exec"].IsNull();
      if (user["auth-provider"] && !user["auth-provider"].IsNull()) {
        if (has_exec) {
          throw ConfigError(u_where + ": fields auth-provider and exec cannot both be set");
        }
        const std::string provider =
            scalar(user["auth-provider"], "name", u_where + ": auth-provider");
        throw ConfigError(u_where + ": field auth-provider (" +
                          (provider.empty() ? std::string("unnamed") : provider) +
                          ") is not supported: kubectl removed auth providers in 1.26; use an exec "
                          "credential plugin instead: " +
                          auth_provider_replacement(provider));
      }
      if (has_exec) cfg.exec = parse_exec(user["exec"], u_where, u.base_dir);
      if (user["username"] && cfg.client_cert_pem.empty() && cfg.token.empty() && !cfg.exec) {
        throw ConfigError(u_where +
                          ": field username (basic auth) is not supported; use client "
                          "certificates, a token or an exec plugin");
      }
    }
    return cfg;
  } catch (const YAML::Exception& e) {
    throw ConfigError(where + ": " + e.what());
  }
}

std::string parent_dir(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

}  // namespace

ClusterConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source_name,
                               const std::string& base_dir, const std::string& context) {
  MergedKubeconfig merged;
  merge_kubeconfig(merged, yaml_text, "kubeconfig " + source_name, base_dir);
  return resolve_context(merged, source_name, context);
}

ClusterConfig load_kubeconfig_file(const std::string& path, const std::string& context) {
  const std::string text = read_file(path, "kubeconfig");
  return parse_kubeconfig(text, path, parent_dir(path), context);
}

ClusterConfig load_kubeconfig_files(const std::vector<std::string>& paths,
                                    const std::string& context) {
  MergedKubeconfig merged;
  std::string used;
  for (const std::string& path : paths) {
    if (path.empty() || !std::filesystem::exists(path)) continue;  // kubectl skips these
    merge_kubeconfig(merged, read_file(path, "kubeconfig"), "kubeconfig " + path, parent_dir(path));
    used += (used.empty() ? "" : ":") + path;
  }
  if (used.empty()) {
    std::string list;
    for (const std::string& path : paths) list += (list.empty() ? "" : ":") + path;
    throw ConfigError("KUBECONFIG=" + list + ": none of its files exist");
  }
  return resolve_context(merged, used, context);
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
    std::vector<std::string> paths;
    std::stringstream ss(kc);
    std::string item;
    while (std::getline(ss, item, ':')) paths.push_back(item);
    return load_kubeconfig_files(paths, context);
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
