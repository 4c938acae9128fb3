-- Health of a kubeload LoadTest (kubeload.dev/v1alpha1), a load test that
-- runs once and gates a deployment: Healthy only when the run finished and
-- passed its gate (condition Ready), Degraded when the run failed or missed
-- its gate (condition Stalled), Progressing otherwise, including a status
-- the operator wrote for an older generation of the spec.
-- Uses only the base library (Argo CD opens no string library for scripts
-- in argocd-cm).
local hs = {}
local status = obj.status
local generation = obj.metadata.generation

local function current(seen)
  return generation == nil or seen == nil or seen == generation
end

if status == nil or status.observedGeneration == nil or status.observedGeneration == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeload operator to pick up the LoadTest"
  return hs
end
if not current(status.observedGeneration) then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeload operator to observe generation " .. tostring(generation)
  return hs
end

local function is_true(condition_type)
  if status.conditions == nil then
    return false
  end
  for _, condition in ipairs(status.conditions) do
    if condition.type == condition_type then
      return condition.status == "True" and current(condition.observedGeneration)
    end
  end
  return false
end

local phase = status.phase or "Pending"
local detail = ""
if status.message ~= nil and status.message ~= "" then
  detail = ": " .. status.message
end

if not is_true("Finished") then
  hs.status = "Progressing"
  hs.message = phase .. detail
  return hs
end
if is_true("Stalled") then
  hs.status = "Degraded"
  if phase == "Failed" then
    hs.message = "Failed (" .. tostring(status.reason) .. ")" .. detail
  else
    hs.message = "Verdict " .. tostring(status.verdict) .. detail
  end
  return hs
end
if is_true("Ready") then
  hs.status = "Healthy"
  hs.message = "Verdict " .. tostring(status.verdict) .. detail
  return hs
end
hs.status = "Degraded"
hs.message = "Finished without a verdict (neither Ready nor Stalled)" .. detail
return hs
