package upgrade

import (
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	addonVersionID   = "addon-version-compat"
	ruleAddonVersion = "addon-version"
)

// addonVersionCompatCheck reads the preflight's add-on compatibility
// tables against the minor the cluster runs now: an add-on already outside
// its project's list fails today, not only after an upgrade.
func addonVersionCompatCheck() check.Check {
	return check.Check{
		ID:       addonVersionID,
		Title:    "Add-on releases whose projects do not list the Kubernetes minor the cluster runs",
		Severity: finding.High,
		Description: "Reads the add-ons the upgrade preflight knows (ingress-nginx, Calico, Cilium, CoreDNS, Rook, Trident; " +
			"data/addon-compat.yaml, every row sourced) from the image tags of DaemonSets and Deployments, and judges each " +
			"release against the minor the API server reports, older or newer than the release's list alike: high where the " +
			"project states the minors a release supports (ingress-nginx, Rook, Trident), medium where it lists the minors " +
			"it tested (Calico, Cilium), low where the list is only kubeadm's CoreDNS pairing. A release the table does not " +
			"list, or a cluster whose version the input does not show, leaves the rule partial. Managed providers' own " +
			"builds come from other image repositories and are not judged. With --target-version the upgrade preflight " +
			"reads the same tables against the target.",
		Reads: append(check.Needs(snapshot.DaemonSets, snapshot.Deployments), check.Optional(snapshot.Pods)), // Pods: kube-apiserver's image gives the version when the input has no /version
		Rules: []check.Rule{
			{ID: ruleAddonVersion, Summary: "every tabled add-on release lists the minor the cluster runs",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments}},
		},
		Cases: check.Cite(check.Prevents(caseIngressNginxV0),
			check.Related("reddit-pi-day-calico-master-label-2023", "coredns-endpointslice-v1beta1-after-upgrade-2023", caseCSIDriver)),
		Run: runAddonVersionCompat,
	}
}

func runAddonVersionCompat(ctx *check.Context) ([]finding.Finding, error) {
	v, _, ok := check.ServerVersion(ctx.Snapshot)
	if !ok {
		ctx.Skip(ruleAddonVersion, "no API server version in the input (add version.json from kubectl version -o json)")
		return nil, nil
	}
	return addonCompat(ctx, v, atNow), nil
}
