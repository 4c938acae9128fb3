#pragma once
// The labels, annotations and names by which the operator marks and finds the
// objects of a run (the worker Job, its pods, the results ConfigMap): the
// builders write them, the views read them. The keys are the API's
// (kubeload/api/meta.hpp); only the worker container's name is the operator's.

#include <string_view>

#include "kubeload/api/meta.hpp"

namespace kubeload::controller {

using api::kCompletionIndexKey;
using api::kLoadTestLabel;
using api::kLoadTestUidLabel;
using api::kManagedBy;
using api::kManagedByLabel;
using api::kNameLabel;
using api::kStartAtAnnotation;
using api::kWorkerName;
inline constexpr std::string_view kContainerName = "loadgen";

}  // namespace kubeload::controller
