package upgrade

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
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

// cgroupV1At finds nodes whose OS boots cgroup v1 by default when the
// target's kubelet refuses to start on cgroup v1.
func cgroupV1At(ctx *check.Context, f *facts, t check.KubeVersion) []finding.Finding {
	if t.Less(f.cgroupV1Refused) {
		return nil
	}
	s := ctx.Snapshot
	byOS := map[string][]*corev1.Node{}
	var unknown []string
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !belowTarget(n, t) {
			continue // its kubelet already runs the target
		}
		if n.Status.NodeInfo.OperatingSystem == "windows" || n.Labels["kubernetes.io/os"] == "windows" {
			continue
		}
		info := nodeos.Identify(n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion)
		v1, decided := bootsCgroupV1(f, info)
		switch {
		case !decided:
			unknown = append(unknown, n.Name)
		case v1:
			byOS[info.Name()] = append(byOS[info.Name()], n)
		}
	}
	if len(unknown) > 0 {
		ctx.Unknowable(ruleCgroupV1, "the default cgroup version of the OS of %s is not in kubegap's table", check.Plural(len(unknown), "node", "nodes"))
	}
	var out []finding.Finding
	for _, os := range slices.Sorted(maps.Keys(byOS)) {
		nodes := byOS[os]
		refs, more := check.NodeRefs(nodes)
		ev := append([]string{}, f.KubeletRefusesCgroupV1From.Sources...)
		ev = append([]string{fmt.Sprintf("kubelet %s and later refuse to start on cgroup v1 unless failCgroupV1 is false", f.cgroupV1Refused.MinorString()),
			fmt.Sprintf("%s boots cgroup v1 by default (cgroup v2 is the default only from the releases listed at https://kubernetes.io/docs/concepts/architecture/cgroups/)", os)}, ev...)
		fd := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
			Title: fmt.Sprintf("%s %s, which boots cgroup v1: kubelet %s refuses to start there", nodesRun(len(nodes)), os, t.MinorString()),
			Message: fmt.Sprintf("%s %s, whose default is cgroup v1. From %s the kubelet fails at start on a cgroup v1 host unless its "+
				"configuration sets failCgroupV1: false, so these nodes go NotReady when their kubelet reaches %s. (A node switched "+
				"to cgroup v2 by hand is not affected; the API does not show which cgroup version a node runs.)%s",
				nodesRun(len(nodes)), os, f.cgroupV1Refused.MinorString(), t.MinorString(), check.MoreText(more)),
			Objects: refs, Evidence: ev,
			Remediation: "Move these pools to an OS image that boots cgroup v2 (Ubuntu 22.04 or later, Debian 11 or later, RHEL 9 " +
				"family, Azure Linux, Amazon Linux 2023, COS) before upgrading their kubelet, or, as a stopgap, set failCgroupV1: " +
				"false in the kubelet configuration.",
			Cases: []string{caseCgroupV1},
		}
		fd.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
			return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
		})...)
		out = append(out, fd)
	}
	return out
}

// bootsCgroupV1 says whether an OS release boots cgroup v1 by default:
// releases of a tabled distribution before its first cgroup-v2 release.
// decided is false for OSes the table does not cover.
func bootsCgroupV1(f *facts, info nodeos.Info) (v1, decided bool) {
	if !info.Known {
		return false, false
	}
	for _, d := range f.CgroupV2DefaultFrom {
		if d.Distro != info.Distro {
			continue
		}
		have, err1 := nodeos.ParseVersion(info.Version)
		from, err2 := nodeos.ParseVersion(d.Version)
		if err1 != nil || err2 != nil {
			return false, false
		}
		return have.Less(from), true
	}
	switch info.Distro {
	case "Container-Optimized OS", "Azure Linux", "Bottlerocket", "Flatcar Container Linux", "Talos Linux":
		// Not in the Kubernetes list; their own documentation is not in
		// the table yet, so say nothing rather than guess.
		return false, false
	}
	return false, false
}

// providerChanges evaluates the provider add-on changes the target crosses
// against the nodes that keep their node image while the upgrade rolls.
//
// The control plane may be known exactly or only bounded (cur): every
// change at a minor between the lower bound and the target is judged. When
// the control plane is already past a change's minor (mid-upgrade), the
// change is judged while any of the provider's nodes is still below that
// minor: the DaemonSet already runs the new image, and those nodes'
// pool upgrades are what is left.
func providerChanges(ctx *check.Context, f *facts, cur check.CurrentVersion, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	cp := cur.Lower
	var out []finding.Finding
	for _, pc := range f.ProviderChanges {
		if t.Less(pc.minor) {
			continue // the change is not crossed by this upgrade
		}
		already := !cp.Less(pc.minor)
		onlyUnknownBelow := false
		if already && !providerNodesBelow(s, pc.Provider, pc.minor) {
			if onlyUnknownBelow = unknownProviderNodesBelow(s, pc.minor) > 0; !onlyUnknownBelow {
				continue // the control plane and every node are past it
			}
		}
		ns, name, _ := strings.Cut(pc.DaemonSet, "/")
		var ds *appsDaemonSet
		for i := range s.DaemonSets {
			if s.DaemonSets[i].Namespace == ns && s.DaemonSets[i].Name == name {
				ds = &s.DaemonSets[i]
			}
		}
		if ds == nil {
			continue
		}
		current := ""
		for _, c := range append(ds.Spec.Template.Spec.InitContainers, ds.Spec.Template.Spec.Containers...) {
			if c.Name == pc.Container {
				current = c.Image
			}
		}
		repo, _, _ := check.ImageParts(current)
		toRepo, _, _ := check.ImageParts(pc.Image)
		switched := strings.EqualFold(repo, toRepo)
		if current == "" || !switched && !strings.EqualFold(repo, pc.FromRepository) {
			continue // neither the image the provider replaces nor its replacement
		}
		if onlyUnknownBelow {
			ctx.Incomplete(ruleProviderChanges, "%s below %s whose provider the input does not show (no providerID or provider labels) may run %s: not judged",
				check.Plural(unknownProviderNodesBelow(s, pc.minor), "node", "nodes"), pc.minor.MinorString(), pc.Image)
			continue
		}
		need, how := pc.NeedsGlibc, fmt.Sprintf("kubegap data: %s installs %s needing GLIBC_%s (%s); not inspected", pc.Image, pc.Installs, pc.NeedsGlibc, strings.Join(pc.Sources, ", "))
		if im, ok := ctx.Images[pc.Image]; ok && im.Err == "" && im.LayersRead {
			need, how = im.MaxGlibc, fmt.Sprintf("--inspect-images: %s needs GLIBC_%s (%s)", pc.Image, im.MaxGlibc, strings.Join(im.Executables, "; "))
		}
		if need == "" {
			continue
		}
		needV, err := nodeos.ParseVersion(need)
		if err != nil {
			continue
		}
		var broken []*corev1.Node
		var unknown, unknownProvider int
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if p := nodeos.ProviderOf(n.Spec.ProviderID, n.Labels); p != nodeos.Provider(pc.Provider) {
				if p == nodeos.ProviderUnknown {
					unknownProvider++ // the DaemonSet may reach it: never a silent pass
				}
				continue
			}
			info := nodeos.Identify(n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion)
			switch {
			case !info.Known || info.Glibc.IsZero():
				unknown++
			case info.Glibc.Less(needV):
				broken = append(broken, n)
			}
		}
		if unknown > 0 {
			ctx.Incomplete(ruleProviderChanges, "%s with unknown glibc would run %s", check.Plural(unknown, "node", "nodes"), pc.Image)
		}
		if unknownProvider > 0 {
			ctx.Incomplete(ruleProviderChanges, "%s whose provider the input does not show (no providerID or provider labels) may run %s: not judged",
				check.Plural(unknownProvider, "node", "nodes"), pc.Image)
		}
		if len(broken) == 0 {
			continue
		}
		refs, more := check.NodeRefs(broken)
		objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", ds)}, refs...)
		ev := []string{
			fmt.Sprintf("DaemonSet %s container %s image %s today", pc.DaemonSet, pc.Container, current),
			fmt.Sprintf("at %s the provider switches it to %s (%s)", pc.minor.MinorString(), pc.Image, strings.Join(pc.Sources, ", ")),
			how,
		}
		if !cur.Exact {
			ev = append(ev, "control plane inferred at "+cur.Text()+": "+cur.Basis)
		}
		glibcOf := map[string]bool{}
		for _, n := range broken {
			if img := n.Status.NodeInfo.OSImage; !glibcOf[img] {
				glibcOf[img] = true
				ev = append(ev, fmt.Sprintf("osImage %q: glibc %s", img, nodeos.Identify(img, n.Status.NodeInfo.KernelVersion).Glibc))
			}
		}
		fd := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
			Title: fmt.Sprintf("Upgrading to %s rolls %s onto %s whose glibc is older than %s", t.MinorString(), pc.Image, check.Plural(len(broken), "node", "nodes"), need),
			Message: fmt.Sprintf("The control plane is upgraded first, and at %s the provider replaces %s's %s image with %s, whose %s needs "+
				"GLIBC_%s on the host. The DaemonSet rolls it to every node, including %s that still run their current node image "+
				"during the rolling upgrade: every new pod sandbox there fails, pods drained from upgraded nodes land on them and stay "+
				"pending, and budgets then block the drain%s.", pc.minor.MinorString(), pc.DaemonSet, pc.Container, pc.Image, pc.Installs,
				need, check.Plural(len(broken), "node", "nodes"), check.MoreText(more)),
			Objects: objs, Evidence: ev,
			Remediation: "Before upgrading the control plane, move these node pools to a node image whose glibc is at least " + need +
				" (for Ubuntu 20.04 pools, Ubuntu 22.04 or Azure Linux), or replace them with new pools; the upgrade is then safe.",
			Cases: []string{pc.Case},
		}
		if switched {
			// Mid-upgrade: the control plane already brought the image.
			fd.Title = fmt.Sprintf("The %s image the provider switched to at %s already runs on %s whose glibc is older than %s",
				pc.Container, pc.minor.MinorString(), check.Plural(len(broken), "node", "nodes"), need)
			fd.Message = fmt.Sprintf("The control plane is at or past %s and %s's %s already runs %s, whose %s needs GLIBC_%s on the host. "+
				"It reaches every node, including %s whose pools have not finished the upgrade and still run their old node image: "+
				"every new pod sandbox there fails, pods drained from upgraded nodes land on them and stay pending, and budgets then "+
				"block the drain%s.", pc.minor.MinorString(), pc.DaemonSet, pc.Container, current, pc.Installs, need,
				check.Plural(len(broken), "node", "nodes"), check.MoreText(more))
			fd.Remediation = "Finish these pools' upgrade with a node image whose glibc is at least " + need +
				" (for Ubuntu 20.04 pools, Ubuntu 22.04 or Azure Linux), or replace them with new pools; until then, keep new pods off them."
		}
		if kind, ok := containerKind(&ds.Spec.Template.Spec, pc.Container); ok {
			fd.AddEvidence(finding.Quote(check.Ref("apps/v1", "DaemonSet", ds),
				finding.Value(check.ContainerField("DaemonSet", kind, pc.Container, "image"), current)))
		}
		fd.AddEvidence(check.NodeValues(broken, func(n *corev1.Node) []finding.Field {
			return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
		})...)
		out = append(out, fd)
	}
	return out
}

// containerKind says whether a pod spec's container of that name is an
// init container or a regular one.
func containerKind(spec *corev1.PodSpec, name string) (string, bool) {
	for _, c := range spec.InitContainers {
		if c.Name == name {
			return check.InitContainers, true
		}
	}
	for _, c := range spec.Containers {
		if c.Name == name {
			return check.Containers, true
		}
	}
	return "", false
}

type appsDaemonSet = appsv1.DaemonSet

// providerNodesBelow reports whether any node of the provider runs a
// kubelet older than minor m (or one it does not report).
func providerNodesBelow(s *snapshot.Snapshot, provider string, m check.KubeVersion) bool {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if nodeos.ProviderOf(n.Spec.ProviderID, n.Labels) == nodeos.Provider(provider) && belowTarget(n, m) {
			return true
		}
	}
	return false
}

// drainBlockers finds what stops kubectl drain (and managed node-pool
// upgrades, which drain the same way) during the rolling upgrade.
func drainBlockers(ctx *check.Context, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	ix := s.Index()
	var out []finding.Finding
	for i := range s.PodDisruptionBudgets {
		pdb := &s.PodDisruptionBudgets[i]
		why, whyFields := blocksEviction(pdb)
		if why == "" {
			continue
		}
		nodes := map[string]bool{}
		var held finding.Grouper // the budget's pods on nodes still to drain, by node
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && pdb.Spec.Selector != nil && !sel.Empty() {
			for _, p := range ix.PodsMatching(pdb.Namespace, sel) {
				if p.Spec.NodeName != "" && pendingNode(ix, p.Spec.NodeName, t) {
					nodes[p.Spec.NodeName] = true
					held.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
						finding.Value("spec.nodeName", p.Spec.NodeName))
				}
			}
			if len(nodes) == 0 && len(ix.PodsMatching(pdb.Namespace, sel)) > 0 {
				continue // its pods run only on nodes already at the target
			}
		}
		pools := map[string]int{}
		var pooled []*corev1.Node // the nodes in the input that a pool label names
		for _, n := range slices.Sorted(maps.Keys(nodes)) {
			if node := ix.Node(n); node != nil {
				pools[check.NodePool(node)]++
				if check.NodePool(node) != "" {
					pooled = append(pooled, node)
				}
			}
		}
		var poolText []string
		for _, p := range slices.Sorted(maps.Keys(pools)) {
			name := p
			if name == "" {
				name = "no pool label"
			}
			poolText = append(poolText, fmt.Sprintf("%s: %s", name, check.Plural(pools[p], "node", "nodes")))
		}
		ref := check.Ref("policy/v1", "PodDisruptionBudget", pdb)
		ev := []string{"PodDisruptionBudget " + pdb.Namespace + "/" + pdb.Name + " " + why}
		if len(poolText) > 0 {
			ev = append(ev, "its pods run on "+strings.Join(poolText, ", "))
		}
		fd := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightDuring,
			Title:   fmt.Sprintf("PodDisruptionBudget %s/%s allows no eviction: draining %s will stall", pdb.Namespace, pdb.Name, check.Plural(len(nodes), "node", "nodes")),
			Message: fmt.Sprintf("The budget allows no voluntary disruption (%s), so the drain of every node running one of its pods waits, and managed node-pool upgrades retry and fail.%s", why, poolSentence(poolText)),
			Objects: []finding.ObjectRef{ref}, Evidence: ev,
			Remediation: "Before the node upgrade, scale the workload so the budget allows at least one disruption, or relax " +
				"minAvailable/maxUnavailable for the upgrade window.",
			Cases: []string{casePDBUpgrade, caseKubeflowPDBs},
		}
		// The fields the verdict rests on: the spec that forbids every
		// eviction, or the status the controller wrote (never a zero of a
		// budget without status).
		fd.AddEvidence(finding.Quote(ref, whyFields...))
		// Where its pods run, and the pool labels of those nodes: what the
		// per-pool count is read from.
		pods := held.Items()
		if len(pods) > check.MaxEvidence {
			pods = pods[:check.MaxEvidence]
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("the budget's pods on the first %d nodes:", check.MaxEvidence))
		}
		fd.AddEvidence(pods...)
		fd.AddEvidence(check.NodeValues(pooled, func(n *corev1.Node) []finding.Field {
			key, value, _ := strings.Cut(check.NodePool(n), "=")
			return []finding.Field{finding.Value("metadata.labels["+key+"]", value)}
		})...)
		out = append(out, fd)
	}
	var bare, local []*snapshot.Pod
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName == "" || !pendingNode(ix, p.Spec.NodeName, t) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Annotations["kubernetes.io/config.mirror"] != "" {
			continue
		}
		if len(p.OwnerReferences) == 0 {
			bare = append(bare, p)
		} else if p.Spec.LocalStorage && p.OwnerReferences[0].Kind != "DaemonSet" {
			local = append(local, p)
		}
	}
	if f, ok := podsFinding(bare, "without a controller", "kubectl drain refuses pods no controller will recreate unless --force is given, and then deletes them for good",
		"Give these pods a controller (a Deployment or Job), or delete them before the upgrade."); ok {
		out = append(out, f)
	}
	if f, ok := podsFinding(local, "with emptyDir data", "kubectl drain refuses pods with emptyDir volumes unless --delete-emptydir-data is given, and their data is lost when they move",
		"Make sure the emptyDir data can be lost (caches, scratch space), or move it to a persistent volume, before draining."); ok {
		f.Severity = finding.Low
		out = append(out, f)
	}
	return out
}

// poolSentence is " pool: N nodes; pool: M nodes." or "" for none.
func poolSentence(poolText []string) string {
	if len(poolText) == 0 {
		return ""
	}
	return " " + strings.Join(poolText, "; ") + "."
}

// pendingNode reports whether the named node is still to be drained for
// the target: below it, or not in the input (unknown).
func pendingNode(ix *snapshot.Index, name string, t check.KubeVersion) bool {
	n := ix.Node(name)
	return n == nil || belowTarget(n, t)
}

// blocksEviction says why a budget lets no pod be evicted, or "" when it
// lets one: its spec says so whatever the pods' health (maxUnavailable 0
// or 0%, minAvailable 100% or at least the pods it expects), or its status
// allows no disruption while its pods are healthy (a budget short of
// healthy pods blocks too, but that is the workload's state, which
// pdb-blocks-drain reports).
func blocksEviction(pdb *policyv1.PodDisruptionBudget) (string, []finding.Field) {
	if mu := pdb.Spec.MaxUnavailable; mu != nil &&
		(mu.Type == intstr.Int && mu.IntVal == 0 || mu.Type == intstr.String && mu.StrVal == "0%") {
		return fmt.Sprintf("spec.maxUnavailable=%s: no pod may ever be evicted", mu.String()),
			[]finding.Field{finding.Value("spec.maxUnavailable", mu.String())}
	}
	if ma := pdb.Spec.MinAvailable; ma != nil {
		switch {
		case ma.Type == intstr.String && ma.StrVal == "100%":
			return "spec.minAvailable=100%: no pod may ever be evicted", []finding.Field{finding.Value("spec.minAvailable", "100%")}
		case ma.Type == intstr.Int && pdb.Status.ExpectedPods > 0 && ma.IntVal >= pdb.Status.ExpectedPods:
			return fmt.Sprintf("spec.minAvailable=%d for status.expectedPods=%d: even with every pod healthy no eviction is allowed",
					ma.IntVal, pdb.Status.ExpectedPods),
				[]finding.Field{finding.Value("spec.minAvailable", ma.IntVal), finding.Value("status.expectedPods", pdb.Status.ExpectedPods)}
		}
	}
	if pdb.Status.ExpectedPods > 0 && pdb.Status.DisruptionsAllowed == 0 && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy {
		return fmt.Sprintf("status.disruptionsAllowed=0 with currentHealthy=%d, desiredHealthy=%d", pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy),
			[]finding.Field{finding.Value("status.disruptionsAllowed", pdb.Status.DisruptionsAllowed),
				finding.Value("status.expectedPods", pdb.Status.ExpectedPods),
				finding.Value("status.currentHealthy", pdb.Status.CurrentHealthy), finding.Value("status.desiredHealthy", pdb.Status.DesiredHealthy)}
	}
	return "", nil
}

func podsFinding(pods []*snapshot.Pod, what, why, fix string) (finding.Finding, bool) {
	if len(pods) == 0 {
		return finding.Finding{}, false
	}
	nodes := map[string]bool{}
	var refs []finding.ObjectRef
	var ev []string
	for i, p := range pods {
		nodes[p.Spec.NodeName] = true
		if i < check.MaxListedObjects {
			refs = append(refs, finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name})
		}
	}
	var where finding.Grouper
	for _, p := range pods {
		where.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, finding.Value("spec.nodeName", p.Spec.NodeName))
	}
	ev = append(ev, "kubectl drain reference: "+kubectlDrainDocURL)
	fd := finding.Finding{
		Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightDuring,
		Title: fmt.Sprintf("%s %s %s up the drain of %s", check.Plural(len(pods), "pod", "pods"), what, drainVerb(len(pods), "holds", "hold"),
			check.Plural(len(nodes), "node", "nodes")),
		Message: fmt.Sprintf("%s %s %s on %s: %s.", check.Plural(len(pods), "pod", "pods"), what, drainVerb(len(pods), "runs", "run"),
			check.Plural(len(nodes), "node", "nodes"), why),
		Objects:     refs,
		Evidence:    ev,
		Remediation: fix,
		Cases:       []string{casePDBUpgrade},
	}
	fd.AddEvidence(where.Items()...)
	return fd, true
}

// drainVerb is the verb for n subjects: one or many.
func drainVerb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// nodesRun is "1 node runs" or "3 nodes run".
func nodesRun(n int) string {
	if n == 1 {
		return "1 node runs"
	}
	return fmt.Sprintf("%d nodes run", n)
}
