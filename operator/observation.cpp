#include "operator/observation.hpp"

namespace kubeload::controller {

std::string_view describe(CreateRefusal::Object object) {
  switch (object) {
    case CreateRefusal::Object::Job:
      return "the worker Job";
    case CreateRefusal::Object::NetworkPolicy:
      return "the workers' NetworkPolicy";
    case CreateRefusal::Object::TokenSecret:
      return "the worker token Secret";
    case CreateRefusal::Object::SpecConfigMap:
      return "the worker spec ConfigMap";
  }
  return "an object of the run";
}

std::optional<JobView> own_job(const Observation& o) {
  const std::string& uid = o.loadtest.metadata.uid;
  if (o.job && !uid.empty() && o.job->owner_uid == uid) return o.job;
  return std::nullopt;
}

std::vector<PodView> own_pods(const Observation& o) {
  const std::optional<JobView> job = own_job(o);
  std::vector<PodView> pods;
  for (const PodView& pod : o.pods) {
    // A worker is a pod the run's Job made: its controller is the Job, by
    // uid. Labels prove nothing (anyone who may create a pod in the
    // namespace can copy them), and a pod taken for a worker is handed the
    // run's token and can fail the run.
    if (job && !job->uid.empty() && pod.controller_uid == job->uid) pods.push_back(pod);
  }
  return pods;
}

}  // namespace kubeload::controller
