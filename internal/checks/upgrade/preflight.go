package upgrade

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Rules of the upgrade preflight.
const (
	ruleControlPlanePath = "control-plane-path"
	ruleKubeletSkew      = "kubelet-skew-at-target"
	ruleKubeProxySkew    = "kube-proxy-skew-at-target"
	ruleCgroupV1         = "kubelet-cgroup-v1"
	ruleProviderChanges  = "provider-changes"
	ruleDrainBlockers    = "drain-blockers"
)

const (
	caseAzureCNI       = "azure-cni-v2-glibc"
	caseCgroupV1       = "k3s-135-kubelet-refuses-cgroup-v1-2026"
	casePDBUpgrade     = "azure-workload-identity-pdb-blocks-aks-upgrade"
	caseKubeflowPDBs   = "kubeflow-pdbs-block-aks-upgrade"
	caseK3sFlannel     = "k3s-1-26-removes-flannel-wireguard-ipsec-backends-2022"
	caseK3sTraefik     = "k3s-1-32-bundled-traefik-v3-breaks-routes-2025"
	skewPolicyURL      = "https://kubernetes.io/releases/version-skew-policy/"
	kubectlDrainDocURL = "https://kubernetes.io/docs/reference/kubectl/generated/kubectl_drain/"
)

var preflightCases = []string{caseAzureCNI, caseCgroupV1, casePDBUpgrade, caseKubeflowPDBs, caseIngressNginxV0,
	caseCRIv1, caseDockershimSock, "eks-amazon-linux-2-ami-end-of-support-2025", "aks-node-os-retirements-ubuntu1804-azurelinux2-2025",
	"reddit-pi-day-calico-master-label-2023", caseCoreDNSSliceV1beta1, caseCSIDriver, caseDFDSCoreDNS,
	caseK3sFlannel, caseK3sTraefik}

// upgradePreflightCheck judges the cluster as it will be during and after
// an upgrade to --target-version. It runs only with that flag.
func upgradePreflightCheck() check.Check {
	return check.Check{
		ID:        "upgrade-preflight",
		Title:     "What an upgrade to --target-version will break",
		Severity:  finding.High,
		Preflight: true,
		Description: "Runs only with --target-version 1.N and judges the cluster as it will be during and after the " +
			"upgrade: every node whose kubelet is below 1.N, also when the control plane is already there (mid-upgrade: " +
			"only the control-plane path is skipped). Without a version document the control plane's version is inferred " +
			"from the newest kubelet and kube-proxy (lower bounds) and the target (upper bound). Fix before upgrading: control-plane jumps of more than one minor (the API server must not skip " +
			"minors); kubelets and kube-proxies that fall outside the version skew policy (at most three minors older " +
			"than the API server) once the control plane reaches 1.N, pool by pool and oldest first; nodes whose OS " +
			"boots cgroup v1 by default when 1.N's kubelet refuses cgroup v1 (from 1.35, KEP-5573); add-on images a " +
			"managed provider switches with the version (data/upgrade-facts.yaml: AKS 1.35 moves azure-cns's CNI " +
			"installer to a /v2/ image whose azure-vnet needs glibc 2.34) against the nodes that keep their current " +
			"node image during the rolling upgrade, inspected for real with --inspect-images when reachable; container " +
			"runtimes the target's kubelet cannot use (containerd before 1.6 from 1.26, which lacks CRI v1; Docker through " +
			"dockershim from 1.24; Docker through cri-dockerd, medium, when the upgrade crosses 1.26), per pool; node OS " +
			"releases the provider states it does not offer at the target (EKS Amazon Linux 2 from 1.33, AKS Windows Server " +
			"2019 from 1.33 and 2022 from 1.37), per pool. Watch " +
			"during the upgrade: PodDisruptionBudgets that allow no eviction (maxUnavailable 0, or minAvailable at or above the pods they expect, whatever their health), pods without a controller and pods with " +
			"emptyDir data, which kubectl drain refuses without flags, with the nodes and pools they hold up; and, as " +
			"info, the nodes per pool that run only DaemonSet and mirror pods, which drain at once. " +
			"Fix before upgrading, too: add-ons whose release, read from the image tag of a DaemonSet or Deployment, is " +
			"listed in its project's table only for minors older than 1.N (data/addon-compat.yaml): high where the " +
			"project states its supported range (ingress-nginx; the storage operators and CSI drivers Rook and NetApp " +
			"Trident, per release); medium where it lists the minors it tested the release " +
			"on (Calico per release line, Cilium per release); and, to watch during the upgrade, low for a CoreDNS " +
			"release that kubeadm deploys only with minors older than 1.N. A release the table does not list leaves the rule partial. " +
			"Other CSI drivers are not judged: the cloud drivers' and Longhorn's published ranges are open-ended minimums. Managed providers' own " +
			"builds of these add-ons come from other repositories and are not judged. " +
			"On EKS, the VPC CNI, CoreDNS and kube-proxy add-ons (AWS's own builds, read from their image tags) against the " +
			"versions the EKS user guide lists for 1.N (data/eks-addons.yaml): older than the target's row is medium for an " +
			"older minor line and low for an older patch, fix before when the current minor's row lists that version too and " +
			"watch during (after the control plane) otherwise; kube-proxy is judged once the control plane is at 1.N. " +
			"On k3s (kubeletVersion +k3s): nodes whose flannel backend (annotation flannel.alpha.coreos.com/backend-type, or " +
			"--flannel-backend in k3s.io/node-args) is one the target k3s minor refuses at start-up (wireguard from 1.26, ipsec from 1.27: " +
			"high when node-args names it, medium from the backend type alone); and the packaged Traefik (kube-system, image " +
			"rancher/mirrored-library-traefik) at v2 when the target k3s release bundles v3 (from v1.32.2+k3s1), medium: IngressRoutes are " +
			"not read, so the routes that break are not listed. " +
			"A CoreDNS from 1.8.1 to before 1.11.0 (data/upgrade-facts.yaml) on a control plane below 1.21, which serves no " +
			"discovery.k8s.io/v1 EndpointSlices, when the target is 1.25 or later, which no longer serves v1beta1: such a " +
			"release picks the version once at start, so unless its pods restart it keeps watching the removed API (medium, " +
			"watch during). Removed API versions are the removed-apis check's, which also judges the target.",
		Reads: check.Needs(snapshot.Nodes, snapshot.DaemonSets, snapshot.Deployments, snapshot.Pods, snapshot.PodDisruptionBudgets),
		Rules: []check.Rule{
			{ID: ruleControlPlanePath, Summary: "the control plane reaches the target one minor at a time"},
			{ID: ruleKubeletSkew, Summary: "every kubelet stays within the skew policy of the target", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleKubeProxySkew, Summary: "every kube-proxy stays within the skew policy of the target",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Pods}},
			{ID: ruleCgroupV1, Summary: "no node OS boots cgroup v1 when the target kubelet refuses it", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleProviderChanges, Summary: "add-ons the provider switches at the target run on the nodes they reach",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}},
			{ID: ruleDrainBlockers, Summary: "nothing blocks draining nodes during the rolling upgrade",
				Needs: []snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods, snapshot.Nodes}},
			{ID: ruleAddonCompat, Summary: "every tabled add-on release lists the target minor",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments}},
			{ID: ruleRuntimeAtTarget, Summary: "every node's container runtime can serve the target's kubelet", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleNodeOSAtTarget, Summary: "no node runs an OS its provider does not offer at the target", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleK3sFlannelBackend, Summary: "on k3s, no node runs a flannel backend the target k3s release refuses at start-up", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleK3sTraefikMajor, Summary: "on k3s, the packaged Traefik is of the major version the target k3s release bundles",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.Deployments}},
			{ID: ruleCoreDNSSliceAtStart, Summary: "no CoreDNS that chose EndpointSlice v1beta1 at start is left watching it after the target removes it",
				Needs: []snapshot.Resource{snapshot.Deployments}},
			{ID: ruleEKSAddons, Summary: "on EKS, the VPC CNI, CoreDNS and kube-proxy add-ons are at or above the versions the EKS user guide lists for the target",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments, snapshot.Nodes}},
		},
		Cases: check.Graded(preflightCases, check.Prevents(caseAzureCNI, caseCgroupV1, casePDBUpgrade, caseKubeflowPDBs, caseIngressNginxV0, "kubelet-126-cri-v1alpha2-removed-old-containerd-2023", "eks-amazon-linux-2-ami-end-of-support-2025", "aks-node-os-retirements-ubuntu1804-azurelinux2-2025", caseK3sFlannel, caseK3sTraefik, caseDFDSCoreDNS, caseCoreDNSSliceV1beta1), check.Related("aks-119-containerd-switch-breaks-docker-sock-mounts-2021", "reddit-pi-day-calico-master-label-2023", "dell-csm-master-nodeselector-k8s124-2022")),
		Run:   runUpgradePreflight,
	}
}

func runUpgradePreflight(ctx *check.Context) ([]finding.Finding, error) {
	if ctx.Target == nil {
		return nil, check.NotEvaluated("needs --target-version 1.N (MCP: target_version): the preflight judges an upgrade to a target, and none was given")
	}
	f, err := loadFacts()
	if err != nil {
		return nil, err
	}
	t := *ctx.Target
	s := ctx.Snapshot
	cur := check.InferCurrentVersion(s, ctx.Target)
	cp := cur.Lower
	if cur.Exact && t.Less(check.KubeVersion{Major: cp.Major, Minor: cp.Minor}) {
		return nil, check.NotEvaluated("--target-version %s is older than the control plane (%s)", t.MinorString(), cp.MinorString())
	}
	var out []finding.Finding
	atTargetAlready := cur.Exact && !cp.Less(check.KubeVersion{Major: t.Major, Minor: t.Minor})
	switch {
	case atTargetAlready:
		if nodes, done := nodePathDone(ctx, t); done {
			// Proven done: nothing is unknown about either path.
			noteUpgradeDone(ctx, cp, t, nodes)
			break
		}
		// Mid-upgrade: the nodes below the target are still to go, and
		// every rule below judges them.
		ctx.Skip(ruleControlPlanePath, "the control plane is already at %s: only the nodes below it are judged%s", cp.MinorString(), nodesDoneUnproven(ctx, t))
	case cur.Exact:
		out = append(out, controlPlanePath(cp, t, cur.Basis)...)
	case cur.Known():
		ctx.Skip(ruleControlPlanePath, "the input bounds the control plane's version (%s) without stating it (add version.json from kubectl version -o json)", cur.Text())
	default:
		ctx.Skip(ruleControlPlanePath, "no API server version in the input (add version.json from kubectl version -o json)")
		ctx.Skip(ruleProviderChanges, "no API server version, kubelet or kube-proxy version in the input: which add-on images change cannot be told")
	}
	out = append(out, kubeletSkewAt(s, t)...)
	out = append(out, kubeProxySkewAt(s, t)...)
	out = append(out, cgroupV1At(ctx, f, t)...)
	if cur.Known() {
		out = append(out, providerChanges(ctx, f, cur, t)...)
	}
	out = append(out, drainBlockers(ctx, t)...)
	out = append(out, addonCompat(ctx, t, atTarget)...)
	out = append(out, daemonSetOnlyNodes(ctx, t)...)
	out = append(out, runtimeAtTarget(ctx, f, t)...)
	out = append(out, nodeOSAtTarget(ctx, f, t)...)
	out = append(out, k3sFlannelBackend(ctx, f, t)...)
	out = append(out, k3sTraefikMajor(ctx, f, t)...)
	out = append(out, coreDNSSliceAtStart(ctx, f, cur, t)...)
	eks, err := eksAddonsAt(ctx, cur, t)
	if err != nil {
		return nil, err
	}
	out = append(out, eks...)
	return out, nil
}

// belowTarget reports whether a node's kubelet is still to be upgraded to
// the target: older than it, or of a version the node does not report
// (unknown is never "already there").
func belowTarget(n *corev1.Node, t check.KubeVersion) bool {
	v, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
	return !ok || v.Less(check.KubeVersion{Major: t.Major, Minor: t.Minor})
}

func controlPlanePath(cp, t check.KubeVersion, cpEvidence string) []finding.Finding {
	if t.Minor-cp.Minor <= 1 || t.Major != cp.Major {
		return nil
	}
	var steps []string
	for m := cp.Minor + 1; m <= t.Minor; m++ {
		steps = append(steps, fmt.Sprintf("%d.%d", cp.Major, m))
	}
	return []finding.Finding{{
		Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightBefore,
		Title:   fmt.Sprintf("The control plane must pass through %d minor versions to reach %s", len(steps), t.MinorString()),
		Message: fmt.Sprintf("The API server is at %s; it must not skip minor versions, so reaching %s takes %d upgrades (%s), each with its own preflight and node catch-up.", cp.MinorString(), t.MinorString(), len(steps), strings.Join(steps, ", ")),
		Objects: []finding.ObjectRef{{Kind: "ControlPlane", Name: "kube-apiserver " + cp.MinorString()}},
		Evidence: []string{cpEvidence, "target " + t.MinorString(),
			"version skew policy: kube-apiserver upgrades must not skip minor versions (" + skewPolicyURL + ")"},
		Remediation: fmt.Sprintf("Plan the upgrade as %s, and run kubegap audit --target-version for each step.", strings.Join(steps, " → ")),
		Cases:       []string{caseAzureCNI},
	}}
}

// skewLimit is how many minors a kubelet or kube-proxy may lag the API
// server: three, two before 1.25 (version skew policy).
func skewLimit(v check.KubeVersion) int {
	if v.Major == 1 && v.Minor < 25 {
		return 2
	}
	return 3
}

func kubeletSkewAt(s *snapshot.Snapshot, t check.KubeVersion) []finding.Finding {
	pools := map[string][]*corev1.Node{}
	oldest := map[string]check.KubeVersion{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		v, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !ok || v.MinorsBehind(t) <= skewLimit(v) {
			continue
		}
		pool := check.NodePool(n)
		pools[pool] = append(pools[pool], n)
		if o, seen := oldest[pool]; !seen || v.Less(o) {
			oldest[pool] = v
		}
	}
	// Oldest pools first: the order in which they must move.
	keys := slices.SortedFunc(maps.Keys(pools), func(a, b string) int {
		if oldest[a] != oldest[b] {
			if oldest[a].Less(oldest[b]) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []finding.Finding
	for i, pool := range keys {
		nodes := pools[pool]
		refs, more := check.NodeRefs(nodes)
		where := "Nodes without a pool label"
		if pool != "" {
			where = "Node pool " + pool
		}
		ev := []string{fmt.Sprintf("target %s: kubelets may be at most %d minors older (%s)", t.MinorString(), skewLimit(oldest[pool]), skewPolicyURL)}
		f := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
			Title: fmt.Sprintf("%s (%s, kubelet %s) would fall outside the version skew at %s",
				where, check.Plural(len(nodes), "node", "nodes"), oldest[pool].MinorString(), t.MinorString()),
			Message: fmt.Sprintf("%s runs kubelet %s, more than %d minors behind %s. Once the control plane reaches %s these kubelets "+
				"are outside the supported skew: upgrade this pool first (step %d of %d, oldest pools first)%s.",
				where, oldest[pool].MinorString(), skewLimit(oldest[pool]), t.MinorString(), t.MinorString(), i+1, len(keys), check.MoreText(more)),
			Objects:     refs,
			Evidence:    ev,
			Remediation: fmt.Sprintf("Upgrade %s to at least %d.%d before the control plane goes past %d.%d.", strings.ToLower(where[:1])+where[1:], t.Major, t.Minor-3, oldest[pool].Major, oldest[pool].Minor+skewLimit(oldest[pool])),
			Cases:       []string{caseAzureCNI},
		}
		f.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
			return []finding.Field{finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion)}
		})...)
		out = append(out, f)
	}
	return out
}

func kubeProxySkewAt(s *snapshot.Snapshot, t check.KubeVersion) []finding.Finding {
	var out []finding.Finding
	judge := func(ref finding.ObjectRef, container, image string) {
		if !strings.HasPrefix(check.ImageName(image), "kube-proxy") {
			return
		}
		_, tag, _ := check.ImageParts(image)
		v, ok := check.ParseKubeVersion(tag)
		if !ok || v.MinorsBehind(t) <= skewLimit(v) {
			return
		}
		f := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
			Title:    fmt.Sprintf("kube-proxy %s would fall outside the version skew at %s", v.MinorString(), t.MinorString()),
			Message:  fmt.Sprintf("%s runs kube-proxy %s, more than %d minors behind %s: upgrade it before the control plane gets there.", ref, v.MinorString(), skewLimit(v), t.MinorString()),
			Objects:  []finding.ObjectRef{ref},
			Evidence: []string{"version skew policy: " + skewPolicyURL},
			Remediation: "Upgrade kube-proxy to within three minors of the target first; on managed clusters, check whether the " +
				"provider upgrades the kube-proxy add-on with the control plane.",
			Cases: []string{caseAzureCNI},
		}
		f.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField(ref.Kind, "", container, "image"), image)))
		out = append(out, f)
	}
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			judge(check.Ref("apps/v1", "DaemonSet", ds), c.Name, c.Image)
		}
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if len(p.OwnerReferences) > 0 {
			continue // judged through its controller
		}
		for _, c := range p.Spec.Containers {
			judge(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, c.Name, c.Image)
		}
	}
	return out
}
