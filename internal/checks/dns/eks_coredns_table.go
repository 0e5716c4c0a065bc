package dns

import "github.com/kubegap/kubegap/internal/check"

// EKSCoreDNS is one row of data/eks-coredns-version.yaml as another
// area reads it: the CoreDNS version the EKS user guide lists for a
// Kubernetes minor.
type EKSCoreDNS struct {
	// Kubernetes is the row's minor ("1.35"), CoreDNS its upstream
	// CoreDNS version ("1.14.3"), parsed in Version.
	Kubernetes, CoreDNS string
	Version             check.KubeVersion
	Sources             []string
	// Exact is false when the minor asked for is newer than every row and
	// this is the newest row, a lower bound only (the guide has never
	// listed an older CoreDNS for a newer Kubernetes).
	Exact bool
}

// TargetEKSCoreDNS returns the table's row for minor m (see EKSCoreDNS.Exact
// for a minor past the table), and false for a minor older than every row.
// The upgrade preflight judges CoreDNS at a target with it, so that one
// table serves both checks.
func TargetEKSCoreDNS(m check.KubeVersion) (EKSCoreDNS, bool, error) {
	facts, err := loadEKSCorednsRows()
	if err != nil {
		return EKSCoreDNS{}, false, err
	}
	row, exact := eksCorednsRowFor(facts.Rows, m)
	if row == nil {
		return EKSCoreDNS{}, false, nil
	}
	return EKSCoreDNS{Kubernetes: row.Kubernetes, CoreDNS: row.CoreDNS, Version: row.coredns, Sources: row.Sources, Exact: exact}, true, nil
}

// IsEKS reports whether the input shows an EKS cluster (the API server's
// -eks- build, or a node of an EKS node group or Karpenter node pool),
// and whether it could tell.
func IsEKS(ctx *check.Context) (eks, known bool) { return isEKS(ctx) }
