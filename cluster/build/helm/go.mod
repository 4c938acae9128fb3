// Build wrapper: the Helm CLI from the Go module proxy, for the chart's tests
// (`go build helm.sh/helm/v3/cmd/helm`). 3.19 is the Helm line whose version
// skew policy covers the local cluster's Kubernetes 1.32 (1.31 to 1.34).
module kubeload.local/cluster/build/helm

go 1.24.0

require helm.sh/helm/v3 v3.19.5
