// Package ingress holds the checks about Ingresses and the controllers
// that serve them.
package ingress

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		ingressClassBindingCheck(),
		ingressBackendTerminationCheck(),
		ingressControllerResilienceCheck(),
		ingressNginxLegacyTLSCheck(),
		externalDNSRoutingCheck(),
		defaultCertificateHostsCheck(),
		ingressNginxPathValidationCheck(),
		ingressNginxSnippetGatesCheck(),
	}
}
