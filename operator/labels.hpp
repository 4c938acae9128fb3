#pragma once
// The labels, annotations and names by which the operator marks and finds the
// objects of a run (the worker Job, its pods, the results ConfigMap): the
// builders write them, the views read them.

#include <string_view>

namespace kubeload::controller {

inline constexpr std::string_view kLoadTestLabel = "kubeload.dev/loadtest";
inline constexpr std::string_view kNameLabel = "app.kubernetes.io/name";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kWorkerName = "kubeload-worker";
inline constexpr std::string_view kManagedBy = "kubeload-operator";
inline constexpr std::string_view kContainerName = "loadgen";
// The label carrying the owning LoadTest's metadata.uid on the Job, its pods
// and the results ConfigMap: names are reused, UIDs never are.
inline constexpr std::string_view kLoadTestUidLabel = "kubeload.dev/loadtest-uid";
// The Job annotation holding the barrier's wall time (unix ms): the one fact
// about the start that is not visible otherwise.
inline constexpr std::string_view kStartAtAnnotation = "kubeload.dev/start-at";
inline constexpr std::string_view kCompletionIndexKey = "batch.kubernetes.io/job-completion-index";

}  // namespace kubeload::controller
