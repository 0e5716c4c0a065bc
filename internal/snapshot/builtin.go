package snapshot

import "strings"

// defaultServed are the group/versions kube-apiserver serves unless an
// administrator turns them off with --runtime-config: the GA versions of
// k8s.io/kubernetes v1.37.2 pkg/controlplane/instance.go
// (genericStableAPIGroupVersionsEnabledByDefault and
// stableAPIGroupVersionsEnabledByDefault), apiextensions.k8s.io/v1
// (apiextensions-apiserver's DefaultAPIResourceConfigSource) and
// apiregistration.k8s.io/v1 (kube-aggregator's).
var defaultServed = map[string]bool{
	"v1":                              true,
	"admissionregistration.k8s.io/v1": true,
	"authentication.k8s.io/v1":        true,
	"authorization.k8s.io/v1":         true,
	"certificates.k8s.io/v1":          true,
	"coordination.k8s.io/v1":          true,
	"events.k8s.io/v1":                true,
	"rbac.authorization.k8s.io/v1":    true,
	"flowcontrol.apiserver.k8s.io/v1": true,
	"apps/v1":                         true,
	"autoscaling/v1":                  true,
	"autoscaling/v2":                  true,
	"batch/v1":                        true,
	"discovery.k8s.io/v1":             true,
	"networking.k8s.io/v1":            true,
	"node.k8s.io/v1":                  true,
	"policy/v1":                       true,
	"resource.k8s.io/v1":              true,
	"storage.k8s.io/v1":               true,
	"scheduling.k8s.io/v1":            true,
	"storagemigration.k8s.io/v1":      true,
	"apiextensions.k8s.io/v1":         true,
	"apiregistration.k8s.io/v1":       true,
}

// AlwaysServed reports whether r is a built-in resource of a group/version
// every kube-apiserver serves by default (no add-on's CRD uses one). A
// list of served resources that lacks it (an api-resources.txt from
// elsewhere, or cut short) proves nothing about it: it is never taken as
// not served, so never as "none exist".
func AlwaysServed(r Resource) bool { return defaultServed[r.APIVersion()] }

// warnUnlistedBuiltIns says which default-served resources a recipe
// dump's api-resources.txt does not list: the file may be from another
// cluster or cut short, and they are not taken as not served.
func (l *loader) warnUnlistedBuiltIns() {
	if l.served == nil {
		return
	}
	var missing []string
	for _, r := range Known() {
		if AlwaysServed(r) && !l.served[RecipeName(r)] {
			missing = append(missing, RecipeName(r))
		}
	}
	if len(missing) > 0 {
		l.opts.warn(Warning{File: l.servedFile, Message: "does not list " + strings.Join(missing, ", ") +
			", which kube-apiserver v1.37 serves by default: they are taken as not in the input, not as not served"})
	}
}
