// Build wrapper: builds upstream etcd from the Go module proxy
// (`go build go.etcd.io/etcd/server/v3` is the etcd server binary).
module kubeload.local/cluster/build/etcd

go 1.23.0

require go.etcd.io/etcd/server/v3 v3.6.16
