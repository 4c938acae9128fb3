#pragma once
// The LoadTest API's names: its group, version and kind, and every label and
// annotation kubeload reads or writes. One definition, used by the spec
// parser, the operator's builders, the plugin and the reports.

#include <string_view>

namespace kubeload::api {

inline constexpr std::string_view kGroup = "kubeload.dev";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "kubeload.dev/v1alpha1";
inline constexpr std::string_view kKind = "LoadTest";
inline constexpr std::string_view kPlural = "loadtests";
// The record of a finished run (api/loadtest_result.hpp): the run's history.
inline constexpr std::string_view kResultKind = "LoadTestResult";
inline constexpr std::string_view kResultPlural = "loadtestresults";
// The LoadTestSchedule (kubeload/api/loadtest_schedule.hpp), same group and
// version: it creates LoadTests on a cron schedule.
inline constexpr std::string_view kScheduleKind = "LoadTestSchedule";
inline constexpr std::string_view kSchedulePlural = "loadtestschedules";

// ---- labels

// The label that groups the runs of one test: baselines (lastPassed),
// retention, the plugin's history, the per-test metrics and the JUnit test
// names read it.
inline constexpr std::string_view kTestLabel = "kubeload.dev/test";
// On the worker Job and its pods: the LoadTest's name (loadtest_label_value).
inline constexpr std::string_view kLoadTestLabel = "kubeload.dev/loadtest";
// On the worker pods: the LoadTest's uid, so a pod of an earlier incarnation
// of the same name is never taken for this run's.
inline constexpr std::string_view kLoadTestUidLabel = "kubeload.dev/loadtest-uid";
// On a LoadTestResult: the run's verdict ("Pass", "Fail", "None"), so a
// baseline lists a test's passed records by label.
inline constexpr std::string_view kVerdictLabel = "kubeload.dev/verdict";
// Kubernetes' recommended labels on everything the operator creates: the
// operator finds its own objects (a Job of an earlier incarnation, the worker
// token key's Secret) by kManagedByLabel=kManagedBy.
inline constexpr std::string_view kNameLabel = "app.kubernetes.io/name";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kWorkerName = "kubeload-worker";
inline constexpr std::string_view kManagedBy = "kubeload-operator";
// Set by the Job controller on an Indexed Job's pods: the worker's index.
inline constexpr std::string_view kCompletionIndexKey = "batch.kubernetes.io/job-completion-index";
// On a Secret, set by its owner: the uses a LoadTest may make of it,
// joined by '.' (a label value holds no comma): "headers" (spec.requests[]
// .headersFrom), "ca" (spec.target.tls.caFrom), "data" (spec.data[]
// .secretKeyRef), "headers.ca", ... Without it no LoadTest reads the Secret,
// whoever applied the LoadTest (docs/security.md).
inline constexpr std::string_view kConsentLabel = "kubeload.dev/consent";
inline constexpr std::string_view kConsentHeaders = "headers";
inline constexpr std::string_view kConsentCa = "ca";
inline constexpr std::string_view kConsentData = "data";

// On each LoadTest a LoadTestSchedule creates: the schedule's name. The
// operator finds a schedule's runs by it, and a run's event wakes its schedule.
inline constexpr std::string_view kScheduleLabel = "kubeload.dev/schedule";

// On each LoadTest an experiment (a LoadTest with spec.variants) creates for
// one variant in one round: the experiment's name, the variant and the round
// (1-based). The operator finds an experiment's rounds by them, and a round's
// event wakes its experiment.
inline constexpr std::string_view kExperimentLabel = "kubeload.dev/experiment";
inline constexpr std::string_view kVariantLabel = "kubeload.dev/variant";
inline constexpr std::string_view kRoundLabel = "kubeload.dev/round";
// On each LoadTest a capacity search (a LoadTest with spec.search) creates
// for one step: the search's name and the step (1-based), as above.
inline constexpr std::string_view kSearchLabel = "kubeload.dev/search";
inline constexpr std::string_view kStepLabel = "kubeload.dev/step";

// ---- annotations

// On the worker Job: the start barrier (RFC 3339 with milliseconds), written
// before any worker hears of it, so a restarted operator starts the
// stragglers at the same barrier.
inline constexpr std::string_view kStartAtAnnotation = "kubeload.dev/start-at";
// On a Secret that consents (kConsentLabel): the kTestLabel values of the
// LoadTests that may use it, comma-separated. Absent: any LoadTest of the
// Secret's namespace.
inline constexpr std::string_view kConsentTestsAnnotation = "kubeload.dev/consent-tests";
// On each LoadTest a LoadTestSchedule creates: the tick it was created for
// (RFC 3339, UTC, whole seconds). One run per tick: a LoadTest with the
// tick's annotation is that tick's run, whichever operator created it.
inline constexpr std::string_view kScheduledAtAnnotation = "kubeload.dev/scheduled-at";

// On a LoadTest, set by CI or GitOps: the revision the run tests (a commit,
// an image tag). Copied into its LoadTestResult.
inline constexpr std::string_view kRevisionAnnotation = "kubeload.dev/revision";

}  // namespace kubeload::api
