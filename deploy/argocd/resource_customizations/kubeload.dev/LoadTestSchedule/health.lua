-- Health of a kubeload LoadTestSchedule (kubeload.dev/v1alpha1), a load test
-- run on a cron schedule: Degraded while its newest finished run failed, or
-- its spec is invalid (condition Stalled); Progressing until the operator
-- has seen its current generation; Healthy otherwise, with condition Ready's
-- message (its newest run passed, or none has finished yet).
-- Uses only the base library (Argo CD opens no string library for scripts
-- in argocd-cm).
local hs = {}
local status = obj.status
local generation = obj.metadata.generation

if status == nil or status.observedGeneration == nil or status.observedGeneration == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeload operator to pick up the LoadTestSchedule"
  return hs
end
if generation ~= nil and status.observedGeneration ~= generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the kubeload operator to observe generation " .. tostring(generation)
  return hs
end

local function condition(condition_type)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == condition_type then
      return c
    end
  end
  return nil
end

local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = tostring(stalled.reason) .. ": " .. tostring(stalled.message)
  return hs
end
local ready = condition("Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = tostring(ready.reason) .. ": " .. tostring(ready.message)
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the kubeload operator to set condition Ready"
return hs
