#include "operator/kube/config.hpp"

#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "operator/kube/tls.hpp"

namespace kubeload::kube {
namespace {

namespace fs = std::filesystem;

// A throwaway certificate and key made in-process, so the TLS loading is
// exercised with real PEM without any file from outside the test.
struct Pem {
  std::string cert;
  std::string key;
};

Pem make_self_signed(const char* cn) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), X509_free);
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  X509_sign(x.get(), key.get(), EVP_sha256());
  auto to_string = [](auto write) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    write(bio.get());
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
  };
  Pem p;
  p.cert = to_string([&](BIO* b) { PEM_write_bio_X509(b, x.get()); });
  p.key = to_string([&](BIO* b) {
    PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  return p;
}

std::string base64(const std::string& s) {
  std::string out(4 * ((s.size() + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("kube_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& content) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

std::string kubeconfig(const std::string& cluster_fields, const std::string& user_fields,
                       const std::string& context_extra = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
         "clusters:\n- name: other\n  cluster:\n    server: https://wrong:1\n"
         "- name: c1\n  cluster:\n" +
         cluster_fields + "users:\n- name: u1\n  user:\n" + user_fields +
         "contexts:\n- name: ctx\n  context:\n    cluster: c1\n    user: u1\n" + context_extra;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KubeConfig, FilesRelativeToTheKubeconfig) {
  TempDir dir;
  const Pem ca = make_self_signed("ca");
  const Pem client = make_self_signed("admin");
  dir.write("ca.crt", ca.cert);
  dir.write("admin.crt", client.cert);
  dir.write("admin.key", client.key);
  const std::string path = dir.write("config", kubeconfig("    server: https://10.246.0.254:6443\n"
                                                          "    certificate-authority: ca.crt\n",
                                                          "    client-certificate: admin.crt\n"
                                                          "    client-key: " +
                                                              dir.str() + "/admin.key\n",
                                                          "    namespace: team-a\n"));
  const ClusterConfig cfg = load_kubeconfig_file(path);
  EXPECT_EQ(cfg.server, "https://10.246.0.254:6443");
  EXPECT_EQ(cfg.ca_pem, ca.cert);
  EXPECT_EQ(cfg.client_cert_pem, client.cert);
  EXPECT_EQ(cfg.client_key_pem, client.key);
  EXPECT_EQ(cfg.default_namespace, "team-a");
  EXPECT_FALSE(cfg.insecure_skip_tls_verify);
  EXPECT_TRUE(cfg.token.empty());
  EXPECT_NE(cfg.source.find("context ctx"), std::string::npos);
  EXPECT_NO_THROW(validate_tls(cfg));
}

TEST(KubeConfig, DataVariantsAreBase64Decoded) {
  const Pem ca = make_self_signed("ca");
  const Pem client = make_self_signed("admin");
  const ClusterConfig cfg =
      parse_kubeconfig(kubeconfig("    server: https://127.0.0.1:6443\n"
                                  "    certificate-authority-data: " +
                                      base64(ca.cert) + "\n",
                                  "    client-certificate-data: " + base64(client.cert) +
                                      "\n"
                                      "    client-key-data: " +
                                      base64(client.key) + "\n"),
                       "inline", "");
  EXPECT_EQ(cfg.ca_pem, ca.cert);
  EXPECT_EQ(cfg.client_cert_pem, client.cert);
  EXPECT_EQ(cfg.client_key_pem, client.key);
  EXPECT_EQ(cfg.default_namespace, "default");
  EXPECT_NO_THROW(validate_tls(cfg));
}

TEST(KubeConfig, TokenAndInsecure) {
  const ClusterConfig cfg = parse_kubeconfig(
      kubeconfig("    server: https://127.0.0.1:6443\n    insecure-skip-tls-verify: true\n",
                 "    token: abc.def\n"),
      "inline", "");
  EXPECT_EQ(cfg.token, "abc.def");
  EXPECT_TRUE(cfg.insecure_skip_tls_verify);
  BearerToken t(cfg);
  EXPECT_EQ(t.current(), "abc.def");
}

TEST(KubeConfig, TokenFileIsReadAndReReadWhenItRotates) {
  TempDir dir;
  const std::string tf = dir.write("token", "first-token\n");
  const ClusterConfig cfg =
      parse_kubeconfig(kubeconfig("    server: https://127.0.0.1:6443\n", "    tokenFile: token\n"),
                       "inline", dir.str());
  EXPECT_EQ(cfg.token, "first-token");
  EXPECT_EQ(cfg.token_file, tf);
  BearerToken t(cfg, std::chrono::seconds(0));
  EXPECT_EQ(t.current(), "first-token");
  dir.write("token", "second-token");
  EXPECT_EQ(t.current(), "second-token");
  // A failed re-read keeps the token we have.
  fs::remove(tf);
  EXPECT_EQ(t.current(), "second-token");
  // With the default period a rotation is only seen after a minute.
  dir.write("token", "third-token");
  BearerToken slow(cfg);
  EXPECT_EQ(slow.current(), "first-token");
}

TEST(KubeConfig, ContextOverride) {
  const std::string yaml = kubeconfig("    server: https://one:6443\n", "    token: t\n") +
                           "- name: other-ctx\n  context:\n    cluster: other\n    user: u1\n";
  EXPECT_EQ(parse_kubeconfig(yaml, "inline", "", "other-ctx").server, "https://wrong:1");
}

TEST(KubeConfig, ErrorsNameTheFileAndField) {
  TempDir dir;
  const std::string server = "    server: https://127.0.0.1:6443\n";
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(kubeconfig("    insecure-skip-tls-verify: true\n", "    token: t\n"),
                               "/x/config", "");
            }).find("kubeconfig /x/config: cluster \"c1\": field server is missing"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(
                  kubeconfig(server + "    certificate-authority: nope.crt\n", "    token: t\n"),
                  "cfg", dir.str());
            }).find("field certificate-authority: cannot read " + dir.str() + "/nope.crt"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(
                  kubeconfig(server, "    client-certificate-data: " + base64("x") + "\n"), "cfg",
                  "");
            }).find("user \"u1\": client-certificate is set but client-key"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(kubeconfig(server, "    client-key-data: ab*c\n"), "cfg", "");
            }).find("user \"u1\": field client-key-data: not valid base64"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(kubeconfig(server, "    tokenFile: /nonexistent/tok\n"), "cfg", "");
            }).find("field tokenFile: cannot read /nonexistent/tok"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_kubeconfig("clusters: []\ncontexts: []\n", "cfg", "");
            }).find("field current-context is missing"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              std::string yaml = kubeconfig(server, "    token: t\n");
              yaml.replace(yaml.find("current-context: ctx"), 20, "current-context: nope");
              parse_kubeconfig(yaml, "cfg", "");
            }).find("context \"nope\" not found in contexts"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(kubeconfig("    server: 10.0.0.1:6443\n", "    token: t\n"), "cfg",
                               "");
            }).find("field server must start with https://"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_kubeconfig("{ not: [valid", "cfg", ""); }).find("not valid YAML"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              load_kubeconfig_file(dir.str() + "/missing");
            }).find("cannot read " + dir.str() + "/missing"),
            std::string::npos);
}

TEST(KubeConfig, ExecUser) {
  TempDir dir;
  const ClusterConfig cfg = parse_kubeconfig(
      kubeconfig("    server: https://127.0.0.1:6443\n    tls-server-name: api.internal\n"
                 "    proxy-url: http://127.0.0.1:3128\n",
                 "    exec:\n"
                 "      apiVersion: client.authentication.k8s.io/v1\n"
                 "      command: bin/get-token\n"
                 "      args: [eks, get-token, --cluster-name, prod]\n"
                 "      env:\n      - name: AWS_PROFILE\n        value: prod\n"
                 "      interactiveMode: Never\n"
                 "      provideClusterInfo: true\n"
                 "      installHint: install aws\n"),
      "cfg", dir.str());
  EXPECT_EQ(cfg.tls_server_name, "api.internal");
  EXPECT_EQ(cfg.proxy_url, "http://127.0.0.1:3128");
  ASSERT_TRUE(cfg.exec);
  EXPECT_EQ(cfg.exec->command, dir.str() + "/bin/get-token");  // a path: from the kubeconfig
  EXPECT_EQ(cfg.exec->args,
            (std::vector<std::string>{"eks", "get-token", "--cluster-name", "prod"}));
  ASSERT_EQ(cfg.exec->env.size(), 1u);
  EXPECT_EQ(cfg.exec->env[0], (std::pair<std::string, std::string>{"AWS_PROFILE", "prod"}));
  EXPECT_EQ(cfg.exec->api_version, "client.authentication.k8s.io/v1");
  EXPECT_EQ(cfg.exec->interactive_mode, InteractiveMode::Never);
  EXPECT_TRUE(cfg.exec->provide_cluster_info);
  EXPECT_EQ(cfg.exec->install_hint, "install aws");

  // A bare name is looked up in PATH when it runs; v1beta1 defaults to IfAvailable.
  const ClusterConfig beta = parse_kubeconfig(
      kubeconfig("    server: https://127.0.0.1:6443\n",
                 "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                 "      command: gke-gcloud-auth-plugin\n"),
      "cfg", dir.str());
  ASSERT_TRUE(beta.exec);
  EXPECT_EQ(beta.exec->command, "gke-gcloud-auth-plugin");
  EXPECT_EQ(beta.exec->interactive_mode, InteractiveMode::IfAvailable);
  EXPECT_FALSE(beta.exec->provide_cluster_info);
}

TEST(KubeConfig, BadExecValuesNameTheField) {
  const std::string server = "    server: https://127.0.0.1:6443\n";
  const std::string v1 = "      apiVersion: client.authentication.k8s.io/v1\n";
  const std::string never = "      interactiveMode: Never\n";
  const struct {
    std::string user;
    std::string error;
  } rows[] = {
      {"    exec: aws\n", "user \"u1\": field exec must be a mapping"},
      {"    exec:\n" + v1 + never, "user \"u1\": field exec.command is missing"},
      {"    exec:\n      command: aws\n" + never,
       "field exec.apiVersion must be client.authentication.k8s.io/v1 or "
       "client.authentication.k8s.io/v1beta1, got \"\""},
      {"    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1alpha1\n",
       "field exec.apiVersion must be"},
      {"    exec:\n      command: aws\n" + v1,
       "field exec.interactiveMode must be set with apiVersion"},
      {"    exec:\n      command: aws\n" + v1 + "      interactiveMode: Sometimes\n",
       "field exec.interactiveMode must be Never, IfAvailable or Always, got \"Sometimes\""},
      {"    exec:\n      command: aws\n" + v1 + never + "      args: aws\n",
       "field exec.args must be a list of strings"},
      {"    exec:\n      command: aws\n" + v1 + never + "      args: [[a]]\n",
       "field exec.args[0] must be a string"},
      {"    exec:\n      command: aws\n" + v1 + never + "      env: x\n",
       "field exec.env must be a list"},
      {"    exec:\n      command: aws\n" + v1 + never + "      env:\n      - value: x\n",
       "field exec.env[0].name must be a non-empty name"},
      {"    exec:\n      command: aws\n" + v1 + never + "      provideClusterInfo: maybe\n",
       "field provideClusterInfo must be true or false"},
      {"    auth-provider:\n      name: gcp\n",
       "user \"u1\": field auth-provider (gcp) is not supported: kubectl removed auth providers in "
       "1.26; use an exec credential plugin instead: gke-gcloud-auth-plugin"},
      {"    auth-provider:\n      name: azure\n", "field auth-provider (azure) is not supported"},
      {"    auth-provider:\n      name: oidc\n", "kubelogin"},
      {"    username: admin\n    password: secret\n",
       "field username (basic auth) is not supported"},
  };
  for (const auto& row : rows) {
    const std::string e =
        error_of([&] { parse_kubeconfig(kubeconfig(server, row.user), "/x/config", ""); });
    EXPECT_NE(e.find(row.error), std::string::npos) << row.user << " -> " << e;
    EXPECT_NE(e.find("kubeconfig /x/config"), std::string::npos) << e;
  }
  EXPECT_NE(error_of([&] {
              parse_kubeconfig(
                  kubeconfig(server + "    proxy-url: socks5://127.0.0.1:1080\n", "    token: t\n"),
                  "cfg", "");
            })
                .find("cluster \"c1\": field proxy-url must be an http:// proxy, got "
                      "\"socks5://127.0.0.1:1080\""),
            std::string::npos);
}

// $KUBECONFIG as a list: kubectl's merge rules, one row per rule.
TEST(KubeConfig, MergedKubeconfigFiles) {
  TempDir a_dir, b_dir;
  const Pem ca_a = make_self_signed("ca-a");
  a_dir.write("ca.crt", ca_a.cert);
  b_dir.write("ca.crt", make_self_signed("ca-b").cert);
  // a: current-context first, cluster "shared" with a relative CA, user "ua".
  const std::string a =
      a_dir.write("config",
                  "current-context: ctx-b\n"
                  "clusters:\n- name: shared\n  cluster:\n    server: https://a:6443\n"
                  "    certificate-authority: ca.crt\n"
                  "users:\n- name: ua\n  user:\n    token: token-a\n"
                  "contexts:\n- name: ctx-a\n  context:\n    cluster: shared\n    user: ua\n");
  // b: a second current-context (ignored), "shared" again (ignored), its own
  // user and context, and a context that uses a's cluster.
  const std::string b =
      b_dir.write("config",
                  "current-context: ctx-a\n"
                  "clusters:\n- name: shared\n  cluster:\n    server: https://b:6443\n"
                  "- name: only-b\n  cluster:\n    server: https://only-b:6443\n"
                  "    certificate-authority: ca.crt\n"
                  "users:\n- name: ub\n  user:\n    tokenFile: token\n"
                  "contexts:\n- name: ctx-b\n  context:\n    cluster: shared\n    user: ub\n"
                  "    namespace: from-b\n"
                  "- name: ctx-a\n  context:\n    cluster: only-b\n    user: ub\n");
  b_dir.write("token", "token-b\n");
  const std::string missing = a_dir.str() + "/missing";

  // current-context from the first file that sets it (a says ctx-b), the
  // context from b (the only one defining ctx-b), cluster "shared" from a.
  ClusterConfig cfg = load_kubeconfig_files({missing, a, b});
  EXPECT_EQ(cfg.server, "https://a:6443");
  EXPECT_EQ(cfg.ca_pem, ca_a.cert);  // relative to a's directory
  EXPECT_EQ(cfg.token, "token-b");   // b's tokenFile, relative to b's directory
  EXPECT_EQ(cfg.token_file, b_dir.str() + "/token");
  EXPECT_EQ(cfg.default_namespace, "from-b");
  EXPECT_NE(cfg.source.find(a + ":" + b), std::string::npos) << cfg.source;
  // ctx-a is defined in both: a's wins.
  cfg = load_kubeconfig_files({a, b}, "ctx-a");
  EXPECT_EQ(cfg.server, "https://a:6443");
  EXPECT_EQ(cfg.token, "token-a");
  // The other order: b's current-context (ctx-a) and b's definitions win.
  cfg = load_kubeconfig_files({b, a});
  EXPECT_EQ(cfg.server, "https://only-b:6443");
  EXPECT_EQ(cfg.token, "token-b");
  cfg = load_kubeconfig_files({b, a}, "ctx-b");
  EXPECT_EQ(cfg.server, "https://b:6443");
  // No file exists.
  EXPECT_NE(error_of([&] {
              load_kubeconfig_files({missing, missing + "2"});
            }).find("none of its files exist"),
            std::string::npos);
  // An error names the file that holds the bad entry.
  const std::string bad =
      b_dir.write("bad",
                  "clusters:\n- name: broken\n  cluster:\n    insecure-skip-tls-verify: true\n"
                  "contexts:\n- name: ctx-broken\n  context:\n    cluster: broken\n");
  EXPECT_NE(error_of([&] {
              load_kubeconfig_files({a, bad}, "ctx-broken");
            }).find("kubeconfig " + bad + ": cluster \"broken\": field server is missing"),
            std::string::npos);
}

TEST(KubeConfig, BadTlsMaterialIsNamed) {
  const Pem a = make_self_signed("a");
  const Pem b = make_self_signed("b");
  ClusterConfig cfg;
  cfg.source = "test";
  cfg.ca_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  EXPECT_NE(error_of([&] { validate_tls(cfg); }).find("certificate-authority"), std::string::npos);
  cfg.ca_pem = a.cert;
  cfg.client_cert_pem = "garbage";
  cfg.client_key_pem = a.key;
  EXPECT_NE(error_of([&] { validate_tls(cfg); }).find("client-certificate"), std::string::npos);
  cfg.client_cert_pem = a.cert;
  cfg.client_key_pem = b.key;  // a key that does not belong to the certificate
  EXPECT_NE(error_of([&] { validate_tls(cfg); }).find("does not match"), std::string::npos);
  cfg.client_key_pem = a.key;
  EXPECT_NO_THROW(validate_tls(cfg));
}

TEST(KubeConfig, CaBundleWithSeveralCertificates) {
  ClusterConfig cfg;
  cfg.ca_pem = make_self_signed("one").cert + make_self_signed("two").cert;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  configure_tls(ctx.get(), cfg);
  STACK_OF(X509_OBJECT)* objs = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx.get()));
  EXPECT_EQ(sk_X509_OBJECT_num(objs), 2);
}

TEST(KubeConfig, InCluster) {
  TempDir dir;
  const Pem ca = make_self_signed("cluster-ca");
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", ca.cert);
  dir.write("namespace", "kubeload-system");
  InClusterSource src;
  src.sa_dir = dir.str();
  src.getenv = [](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "KUBERNETES_SERVICE_HOST") return "10.245.0.1";
    if (std::string(name) == "KUBERNETES_SERVICE_PORT") return "443";
    return std::nullopt;
  };
  const ClusterConfig cfg = load_in_cluster(src);
  EXPECT_EQ(cfg.server, "https://10.245.0.1:443");
  EXPECT_EQ(cfg.token, "sa-token");
  EXPECT_EQ(cfg.token_file, dir.str() + "/token");
  EXPECT_EQ(cfg.ca_pem, ca.cert);
  EXPECT_EQ(cfg.default_namespace, "kubeload-system");
  EXPECT_NO_THROW(validate_tls(cfg));

  src.getenv = [](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "KUBERNETES_SERVICE_HOST") return "fd00::1";
    if (std::string(name) == "KUBERNETES_SERVICE_PORT") return "6443";
    return std::nullopt;
  };
  EXPECT_EQ(load_in_cluster(src).server, "https://[fd00::1]:6443");

  fs::remove(dir.str() + "/token");
  EXPECT_NE(error_of([&] { load_in_cluster(src); }).find("service-account token: cannot read"),
            std::string::npos);
  src.getenv = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  EXPECT_NE(error_of([&] { load_in_cluster(src); }).find("KUBERNETES_SERVICE_HOST"),
            std::string::npos);
}

TEST(KubeConfig, Base64) {
  EXPECT_EQ(base64_decode("aGVsbG8=", "x"), "hello");
  EXPECT_EQ(base64_decode("aGVsbG8", "x"), "hello");
  EXPECT_EQ(base64_decode("aGVs\nbG8h", "x"), "hello!");
  EXPECT_EQ(base64_decode("", "x"), "");
  EXPECT_EQ(base64_decode(base64(std::string("\0\xff\x10", 3)), "x"), std::string("\0\xff\x10", 3));
  EXPECT_THROW(base64_decode("a", "x"), ConfigError);
  EXPECT_THROW(base64_decode("ab=c", "x"), ConfigError);
  EXPECT_THROW(base64_decode("a*b", "x"), ConfigError);
}

}  // namespace
}  // namespace kubeload::kube
