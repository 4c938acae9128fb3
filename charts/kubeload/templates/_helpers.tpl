{{/* The chart's name, or nameOverride. */}}
{{- define "kubeload.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name, used for every object the chart makes:
fullnameOverride, else the release name if it contains the chart's name,
else "<release>-<chart>". 63 characters at most (a DNS label).
*/}}
{{- define "kubeload.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Cluster-scoped objects are shared by all namespaces: add the release's. */}}
{{- define "kubeload.clusterName" -}}
{{- printf "%s-%s" (include "kubeload.fullname" .) .Release.Namespace }}
{{- end }}

{{- define "kubeload.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubeload.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubeload.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "kubeload.labels" -}}
helm.sh/chart: {{ include "kubeload.chart" . }}
{{ include "kubeload.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kubeload
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "kubeload.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kubeload.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kubeload.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Leader election is on when asked for, and always with more than one replica. */}}
{{- define "kubeload.leaderElect" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- end }}

{{/*
What kubeload-operator does, and so what it may do. Shared by the ClusterRole
(all namespaces) and the Role (watchNamespace); docs/deploy.md says why each.
*/}}
{{- define "kubeload.rules" -}}
# create: the runs of LoadTestSchedules (each goes through the admission
# policy as any LoadTest); delete: ttlSecondsAfterFinished, a schedule's
# history limits and concurrencyPolicy Replace.
- apiGroups: [kubeload.dev]
  resources: [loadtests]
  verbs: [get, list, watch, create, delete]
- apiGroups: [kubeload.dev]
  resources: [loadtests/status]
  verbs: [patch]
- apiGroups: [kubeload.dev]
  resources: [loadtests/finalizers]
  verbs: [update]
# Each finished run's record: written once, its run's status brought up to
# date (the target's use comes later), read for baselines, and pruned per
# the history policy.
- apiGroups: [kubeload.dev]
  resources: [loadtestresults]
  verbs: [get, list, create, patch, delete]
- apiGroups: [kubeload.dev]
  resources: [loadtestschedules]
  verbs: [get, list, watch]
- apiGroups: [kubeload.dev]
  resources: [loadtestschedules/status]
  verbs: [patch]
# A run's owner reference to its schedule blocks the schedule's deletion
# (blockOwnerDeletion), which OwnerReferencesPermissionEnforcement allows
# only to who may update the owner's finalizers.
- apiGroups: [kubeload.dev]
  resources: [loadtestschedules/finalizers]
  verbs: [update]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch]
# The target Service: its selector, to find the pods status.target reads,
# and with its EndpointSlices where its traffic goes, decided before each
# run's Job is created (a denied pod behind an allowed Service is refused).
- apiGroups: [""]
  resources: [services]
  verbs: [get]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
# Each run's spec ConfigMap (created before its Job) and its results
# ConfigMap (the kept merge, patched as workers finish).
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, create, patch]
# Each run's worker-token Secret: created (owned by its LoadTest), never read.
# get: the metadata of each Secret a LoadTest names (headersFrom, a caFrom
# secretKeyRef), before its Job is created, for the Secret owner's consent
# (the kubeload.dev/consent label, docs/security.md). The operator asks for
# a PartialObjectMetadata and never for the data, but RBAC cannot tell the
# two apart: to the API server this is a plain get, which would return the
# whole Secret. Without it every headersFrom/caFrom run fails
# SecretNotConsented, naming the 403.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create]
{{- if and .Values.networkPolicy.enabled .Values.networkPolicy.perRun }}
# Each run's NetworkPolicy: created (owned by its LoadTest), never changed.
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [create]
{{- end }}
{{- end }}

{{/*
The Secret holding the worker token key (--worker-token-key-secret): the
user's workerTokenKey.existingSecret, else the one the operator creates.
*/}}
{{- define "kubeload.workerTokenKeySecret" -}}
{{- if .Values.workerTokenKey.existingSecret }}
{{- .Values.workerTokenKey.existingSecret }}
{{- else }}
{{- printf "%s-worker-token-key" (include "kubeload.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
The labels of a Prometheus Operator object (ServiceMonitor, PodMonitor,
PrometheusRule): the chart's, monitoring.labels, then the object's own
(list ROOT OWN-LABELS); a later one wins a key.
*/}}
{{- define "kubeload.monitoringLabels" -}}
{{- $root := index . 0 }}
{{- $labels := include "kubeload.labels" $root | fromYaml }}
{{- $labels = merge (deepCopy (index . 1)) (deepCopy $root.Values.monitoring.labels) $labels }}
{{- toYaml $labels }}
{{- end }}

{{/*
Who may reach the worker pods' port, as NetworkPolicy `from` peers (JSON):
the operator's own pods, networkPolicy.metricsScrapers, and every pod of
monitoring.prometheusNamespace. One list for the standing policies
(worker-networkpolicy.yaml) and the operator's per-run ones
(--worker-network-policy-from).
*/}}
{{- define "kubeload.workerIngressPeers" -}}
{{- $operator := dict "namespaceSelector" (dict "matchLabels" (dict "kubernetes.io/metadata.name" .Release.Namespace)) "podSelector" (dict "matchLabels" (include "kubeload.selectorLabels" . | fromYaml)) }}
{{- $peers := prepend .Values.networkPolicy.metricsScrapers $operator }}
{{- with .Values.monitoring.prometheusNamespace }}
{{- $peers = append $peers (dict "namespaceSelector" (dict "matchLabels" (dict "kubernetes.io/metadata.name" .))) }}
{{- end }}
{{- toJson $peers }}
{{- end }}

{{/* `helm test`'s objects (helm-test.yaml, tests/loadtest.yaml): their name. */}}
{{- define "kubeload.testName" -}}
{{- printf "%s-helm-test" (include "kubeload.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Their labels: not the operator's selector labels, which the Services select. */}}
{{- define "kubeload.testLabels" -}}
{{- include "kubeload.labels" . | fromYaml | merge (dict "app.kubernetes.io/component" "helm-test") | toYaml }}
{{- end }}

{{/* Where LoadTests run: the watched namespace, else the release's. */}}
{{- define "kubeload.loadtestNamespace" -}}
{{- default .Release.Namespace .Values.watchNamespace }}
{{- end }}
