// Build wrapper: CoreDNS (cluster DNS for the local cluster) with only the plugins
// it uses, so the build stays small. Same as CoreDNS's own main, with a short
// directive list instead of all of core/plugin.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// In CoreDNS's execution order (core/dnsserver/zdirectives.go).
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes"}
}

func main() { coremain.Run() }
