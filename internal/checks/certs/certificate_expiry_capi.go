package certs

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The Cluster API part of certificate-expiry. A control-plane node that
// Cluster API's kubeadm bootstrap provider made gets its kubeadm
// certificates (API server, etcd, the control plane's client
// certificates) when the machine first boots, valid for a year, and
// Cluster API renews them by replacing the machine: an upgrade, a rollout,
// or KubeadmControlPlane's rolloutBefore.certificatesExpiryDays where it is
// set. Tanzu/VKS guest clusters are made this way. The certificates live
// on the node's disk and the KubeadmControlPlane in the management
// cluster, neither of which the workload cluster's API shows; what it
// shows is the Node, its creation time and the annotations Cluster API
// puts on it. So this rule dates the certificates from the Node's creation
// and says it is an inference.

const (
	ruleCAPINodeAge = "capi-control-plane-node-age"
	caseCAPINodeAge = "tanzu-vks-guest-cluster-certs-expire-on-node-anniversary-2026"

	capiMachineAnnotation   = "cluster.x-k8s.io/machine"
	capiOwnerKindAnnotation = "cluster.x-k8s.io/owner-kind"
	capiKCPKind             = "KubeadmControlPlane"
	capiCertsFact           = "capi-kubeadm-machine-certificates"
)

// capiControlPlane says whether a Node is a control-plane node that
// Cluster API made: it carries Cluster API's Machine annotation and either
// a control-plane role label or KubeadmControlPlane as its owner kind.
func capiControlPlane(n *corev1.Node) (machine string, ok bool) {
	machine = n.Annotations[capiMachineAnnotation]
	if machine == "" {
		return "", false
	}
	if n.Annotations[capiOwnerKindAnnotation] == capiKCPKind {
		return machine, true
	}
	for _, l := range []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"} {
		if _, has := n.Labels[l]; has {
			return machine, true
		}
	}
	return "", false
}

// capiNodes reports the Cluster API control-plane nodes within warnDays
// of a year old, or older.
func (r *expiryRun) capiNodes(s *snapshot.Snapshot, facts *expiryFacts) {
	var life horizonFact
	for _, h := range facts.OneYear {
		if h.Name == capiCertsFact {
			life = h
		}
	}
	if life.Days == 0 {
		r.ctx.Unknowable(ruleCAPINodeAge, "the certificate expiry facts have no %s row", capiCertsFact)
		return
	}
	var seen []string
	for i := range s.Nodes {
		n := &s.Nodes[i]
		machine, ok := capiControlPlane(n)
		if !ok {
			continue
		}
		seen = append(seen, n.Name)
		if n.CreationTimestamp.IsZero() {
			continue
		}
		r.capiNode(n, machine, life)
	}
	if len(seen) > 0 {
		sort.Strings(seen)
		r.ctx.Unknowable(ruleCAPINodeAge, "the kubeadm certificates of the Cluster API control-plane nodes (%s) are on their disks, "+
			"which the API does not show: their end dates are inferred from when each Node was created", strings.Join(seen, ", "))
	}
}

func (r *expiryRun) capiNode(n *corev1.Node, machine string, life horizonFact) {
	created := n.CreationTimestamp.Time
	due := created.Add(time.Duration(life.Days) * 24 * time.Hour)
	left := daysLeft(due, r.at)
	if left >= warnDays {
		return
	}
	day := due.UTC().Format(time.DateOnly)
	title := fmt.Sprintf("Cluster API control-plane node %s was created %s: kubeadm certificates issued when it booted expire on %s, in %d days",
		n.Name, created.UTC().Format(time.DateOnly), day, left)
	then := fmt.Sprintf("they expire on %s, in %d days, and the API server, etcd and the control-plane components on this node "+
		"then stop accepting each other's connections", day, left)
	if left < 0 {
		title = fmt.Sprintf("Cluster API control-plane node %s was created %s, more than a year ago: kubeadm certificates issued when it "+
			"booted expired on %s", n.Name, created.UTC().Format(time.DateOnly), day)
		then = fmt.Sprintf("they expired on %s, %d days ago; if this node's API server still serves, they were renewed in place, "+
			"which the API does not show", day, -left)
	}
	ref := check.NodeRef(n.Name)
	f := finding.Finding{
		Check:    "certificate-expiry",
		Severity: finding.Medium,
		Title:    title,
		Message: fmt.Sprintf("Node %s belongs to Cluster API Machine %s and is a control-plane node. Cluster API's kubeadm bootstrap "+
			"issues a control-plane machine's certificates for %d days when it first boots and renews them only by replacing the "+
			"machine (an upgrade or a rollout); Tanzu/VKS guest clusters are built this way. If nothing replaced this node "+
			"or renewed them in place, %s. This is inferred from the Node's creation time: the certificates are on the node's "+
			"disk, and whether the KubeadmControlPlane in the management cluster sets rolloutBefore.certificatesExpiryDays "+
			"(an automatic rollout before expiry) is not visible from this cluster.",
			n.Name, machine, life.Days, then),
		Objects: []finding.ObjectRef{ref},
		Remediation: "Read the real dates: on the management (Supervisor) cluster, the control-plane Machine's " +
			"status.certificatesExpiryDate, or on the node, kubeadm certs check-expiration. Before they end, roll the control " +
			"plane (upgrade the cluster, or trigger a KubeadmControlPlane rollout) and set " +
			"spec.rolloutBefore.certificatesExpiryDays (spec.rollout.before.certificatesExpiryDays in v1beta2) on the " +
			"KubeadmControlPlane where your platform lets you, so Cluster API " +
			"replaces the machines ahead of expiry.",
		Cases: []string{caseCAPINodeAge},
	}
	f.AddEvidence(finding.Quote(ref,
		finding.Value("metadata.annotations["+capiMachineAnnotation+"]", machine),
		finding.Value("metadata.creationTimestamp", created.UTC().Format(time.RFC3339))))
	f.Evidence = append(f.Evidence, fmt.Sprintf("Cluster API control-plane machine certificates live %d days (%s)",
		life.Days, strings.Join(life.Sources, ", ")))
	r.findings = append(r.findings, f)
}
