// Package versions holds the checks that compare component versions with
// sourced tables: etcd releases below the Kubernetes documentation's
// minimums, components with fixed critical CVEs, and add-on releases that
// keep their first ServiceAccount token.
package versions

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
)

// affected reports whether v is below the fix of its line: on a listed
// line below its fixed patch, or on a line older than every listed one. A
// line newer than every listed one is not affected.
func affected(v check.KubeVersion, fixed []check.KubeVersion) bool {
	newest := check.KubeVersion{}
	for _, f := range fixed {
		if f.Major == v.Major && f.Minor == v.Minor {
			return v.Less(f)
		}
		if newest.Less(f) {
			newest = f
		}
	}
	oldest := fixed[0]
	for _, f := range fixed {
		if f.Less(oldest) {
			oldest = f
		}
	}
	return v.Less(oldest) || (v.Less(newest) && !lineListed(v, fixed))
}

func lineListed(v check.KubeVersion, fixed []check.KubeVersion) bool {
	for _, f := range fixed {
		if f.Major == v.Major && f.Minor == v.Minor {
			return true
		}
	}
	return false
}

func parseAll(list []string) ([]check.KubeVersion, error) {
	out := make([]check.KubeVersion, len(list))
	for i, s := range list {
		v, ok := check.ParseKubeVersion(s)
		if !ok {
			return nil, fmt.Errorf("bad version %q", s)
		}
		out[i] = v
	}
	return out, nil
}

// vendorBuild reports whether a version string carries a vendor or
// distribution build marker (v1.12.2-gke.3, 1.7.27-1, 2.0.4-k3s2,
// v1.29.1+rke2r1): such builds may carry backported fixes the version
// number does not show.
func vendorBuild(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	return strings.ContainsAny(s, "-+")
}
