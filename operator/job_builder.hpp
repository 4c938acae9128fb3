#pragma once
// The worker Indexed Job of a LoadTest, built from the LoadTest and the
// operator's configuration only: no client, no status. The controller creates
// the result as is (a 409 means it already exists, which is fine: the name is
// a function of the LoadTest's name).

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_schedule.hpp"

#include "kubeload/names.hpp"
#include "kubeload/spec.hpp"
#include "operator/config.hpp"
#include "operator/labels.hpp"
#include "operator/target_destinations.hpp"

namespace kubeload::controller {

// The LoadTest manifest (JSON) each worker parses, as a file mounted from the
// run's spec ConfigMap (`loadgen worker --spec`). Not an environment
// variable: Linux refuses one string of the environment over 128 KiB, and a
// spec may be 256 KiB.
inline constexpr std::string_view kSpecVolume = "spec";
inline constexpr std::string_view kSpecMountPath = "/etc/kubeload/spec";
inline constexpr std::string_view kSpecFileName = "loadtest.json";
// The worker container's command, whatever its image: where the kubeload
// image (Dockerfile) installs loadgen. An image's own entrypoint never runs.
inline constexpr std::string_view kWorkerCommand = "/usr/local/bin/loadgen";
// Where spec.target.tls.caFrom is mounted in the worker (read-only).
inline constexpr std::string_view kCaVolume = "target-ca";
inline constexpr std::string_view kCaMountPath = "/etc/kubeload/target-ca";
inline constexpr std::string_view kCaFileName = "ca.crt";
// Each spec.data source from a ConfigMap or Secret key is the volume
// `data-<its index in spec.data>` (a source's name may hold what a volume
// name may not), mounted read-only at data_mount_directory(name)
// (kubeload/data_mount.hpp).
std::string data_volume_name(size_t source_index);
// The env var holding the LoadTest's metadata.uid, which the worker serves
// back in /result as loadTestUid.
inline constexpr std::string_view kLoadTestUidEnv = "KUBELOAD_LOADTEST_UID";

// `<name>-workers` when that is a valid DNS label of at most 59 characters,
// else a shortened, sanitized prefix, a hash of the full name and
// "-workers". 59 rather than 63: Kubernetes names each pod's hostname
// `<job>-<index>`, which must stay a 63-character DNS label for up to 1000
// workers ("-999"). The hash keeps LoadTests that share a prefix, or whose
// names differ only in dots, apart.
std::string worker_job_name(std::string_view loadtest_name);

// The env var that carries the value of one headersFrom entry: entries are
// numbered from 0 in document order over all requests (request 0's entries,
// then request 1's, ...), so worker and operator agree from the spec alone.
std::string header_env_name(size_t ordinal);

// The Secret that hands the run's worker token to the pods (env
// KUBELOAD_WORKER_TOKEN from its key "token"): `<job name>-token-<uid prefix>`,
// owned by the LoadTest so it goes with it; the uid keeps a recreated LoadTest
// of the same name from meeting the old run's Secret (and token) while that is
// being garbage-collected. The operator only creates it; it never reads
// Secrets (it derives the token again when it needs it).
inline constexpr std::string_view kWorkerTokenKey = "token";
std::string worker_token_secret_name(std::string_view loadtest_name, std::string_view uid);
nlohmann::json build_worker_token_secret(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                         const std::string& token);

// The ConfigMap that hands the workers their manifest (kSpecFileName):
// `<job name>-spec-<uid prefix>`, owned by the LoadTest, immutable, created
// before the Job.
std::string worker_spec_config_map_name(std::string_view loadtest_name, std::string_view uid);
nlohmann::json build_worker_spec_config_map(const api::LoadTest& loadtest,
                                            const LoadTestSpec& spec);

// The run's NetworkPolicy (when config.worker_ingress_from or
// config.worker_egress_dns_to is set): `<job name>-<uid prefix>`, owned by
// the LoadTest. Its worker pods (by the run's uid label) accept connections on
// the worker port only from the ingress peers, and send only to DNS, the
// target Service's pods (`target`, as observe() read it) and, outside the
// cluster's ranges, where the deny and allow lists let them: the target
// policy held in the dataplane, after kube-proxy's DNAT, by a CNI that
// enforces NetworkPolicy.
bool worker_network_policy_wanted(const OperatorConfig& config);
std::string worker_network_policy_name(std::string_view loadtest_name, std::string_view uid);
nlohmann::json build_worker_network_policy(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                           const OperatorConfig& config,
                                           const TargetServiceView* target = nullptr);

// The Job (batch/v1) for `loadtest`, the LoadTest as the API server returns
// it (apiVersion, kind, metadata with uid; spec), whose parse is `spec`
// (which must be valid). Throws std::invalid_argument when metadata.name,
// metadata.namespace or metadata.uid is missing: the API server always sets
// them, and without them there is no place and no owner reference.
// `decided`: the cluster addresses the worker may load (decided_destinations).
nlohmann::json build_worker_job(const api::LoadTest& loadtest, const LoadTestSpec& spec,
                                const OperatorConfig& config,
                                const std::vector<DecidedDestination>& decided = {});

// The LoadTest a LoadTestSchedule creates for the tick `scheduled_at`:
// named by generateName `<schedule>-`, in the schedule's namespace, with
// spec.template's labels and annotations, the kubeload.dev/schedule label
// (loadtest_label_value of the schedule's name) and the
// kubeload.dev/scheduled-at annotation (the tick, RFC 3339), the
// kubeload.dev/test label defaulting to the schedule's name (so its runs
// form one test's history), the template's spec as given, and the schedule
// as its controlling owner (its runs go with it). Throws
// std::invalid_argument when metadata.name, namespace or uid is missing.
nlohmann::json build_scheduled_loadtest(const api::LoadTestSchedule& schedule,
                                        api::Time scheduled_at);

// The name of an experiment's LoadTest for `variant` in `round` (1-based):
// `<experiment>-<variant>-<round>`, shortened with a hash beyond 253.
std::string round_loadtest_name(std::string_view experiment, std::string_view variant,
                                uint64_t round);

// The LoadTest an experiment (a LoadTest with spec.variants) runs for the
// variant `variant_index` of its spec in `round` (1-based): the experiment's
// spec as given without variants, experiment, thresholds (the experiment
// judges each variant over all its rounds) and ttlSecondsAfterFinished (it
// goes with the experiment); its target's url, service and podSelector the
// variant's, the variant's headers added to every request. Labelled as the
// experiment, with kubeload.dev/experiment, variant and round, and
// kubeload.dev/test `<test>-<variant>` (each variant's records form a
// history of their own); the experiment is its controlling owner. Throws
// std::invalid_argument when metadata.name, namespace or uid is missing or
// the variant is not in the spec.
nlohmann::json build_round_loadtest(const api::LoadTest& experiment, std::size_t variant_index,
                                    uint64_t round);

// The name of a capacity search's LoadTest for `step` (1-based):
// `<search>-step-<step>`, shortened with a hash beyond 253.
std::string step_loadtest_name(std::string_view search, uint64_t step);

// The LoadTest a capacity search (a LoadTest with spec.search) runs for
// `step` at `value`: the search's spec as given without search and
// ttlSecondsAfterFinished (it goes with the search), its thresholds kept (the
// step is judged as any LoadTest), spec.load.rate (search.rate) or
// spec.load.connections (search.connections) set to the value. Labelled as
// the search, with kubeload.dev/search and step, and kubeload.dev/test
// `<test>-search` (the steps' records form a history of their own, apart
// from runs of the test at one load); the search is its controlling owner.
// Throws std::invalid_argument when metadata.name, namespace or uid is
// missing or the spec has no search.
nlohmann::json build_step_loadtest(const api::LoadTest& search, uint64_t step, double value);

}  // namespace kubeload::controller
