package registries

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Scale thresholds: policy, not fact. A Deployment or StatefulSet below
// pullAlwaysMinReplicas pulls too rarely to matter; from pullAlwaysHighScale
// pods (a DaemonSet on that many nodes) one rollout or restart wave is a
// burst of pulls that a registry or a NAT gateway notices.
const (
	pullAlwaysMinReplicas = 20
	pullAlwaysHighScale   = 100
)

// imagePullAlwaysCheck finds workloads that make every node go back to the
// registry on each start or restart of their pods.
func imagePullAlwaysCheck() check.Check {
	return check.Check{
		ID:       "image-pull-always",
		Title:    "Image pulls on every start at scale",
		Severity: finding.High,
		Description: "DaemonSets, and Deployments or StatefulSets with at least 20 replicas, whose containers pull " +
			"their image on every start: imagePullPolicy Always, set or implied by a :latest or untagged image " +
			"without digest. A crash loop then becomes a stream of registry requests from every node, which " +
			"rate limits and shared NAT addresses turn into a cluster-wide outage; when the registry is " +
			"unreachable, restarts fail although the image is on the node. High for a DaemonSet on 100 or " +
			"more nodes (or a workload of 100 or more pods) or with crash-looping pods; floating tags on " +
			"DaemonSets are reported even with IfNotPresent. Pull events that show a registry rate limit are " +
			"reported with the pods and nodes; a status code or tag inside the quoted image reference never counts. " +
			"Images pinned by digest are never flagged for pull policy, and unresolved template placeholders " +
			"(${VAR}, {{ .Values.x }}, $(VAR), <image_url>) are not judged. A DaemonSet that runs on no node (its " +
			"status says 0 should run it, or none of the Nodes in the input matches its selection) pulls nothing and " +
			"is not reported. A DaemonSet without status is sized by the Nodes " +
			"in the input that match its node selector and tolerate their taints, as an estimate. Each kind of " +
			"workload is its own rule: a DaemonSet's finding stands without StatefulSets in the input. Pods and " +
			"ReplicaSets only add crash loops.",
		Reads: append(check.Needs(snapshot.DaemonSets, snapshot.Deployments, snapshot.StatefulSets),
			check.Optional(snapshot.Pods), check.Optional(snapshot.ReplicaSets), check.Optional(snapshot.Events), check.Optional(snapshot.Nodes)),
		Rules: []check.Rule{
			{ID: pullRuleDaemonSets, Summary: "DaemonSets that pull their image on every start, or run a floating tag",
				Needs: []snapshot.Resource{snapshot.DaemonSets}},
			{ID: pullRuleDeployments, Summary: "Deployments of 20 or more replicas that pull their image on every start",
				Needs: []snapshot.Resource{snapshot.Deployments}},
			{ID: pullRuleStatefulSets, Summary: "StatefulSets of 20 or more replicas that pull their image on every start",
				Needs: []snapshot.Resource{snapshot.StatefulSets}},
			{ID: pullRuleRateLimit, Summary: "Pull events refused by a registry rate limit",
				Needs: []snapshot.Resource{snapshot.Events}},
		},
		Cases: check.Prevents("daemonset-pull-always-nat-ratelimit", "github-sidecar-oom-pull-always-registry", "docker-hub-pull-rate-limits"),
		Run:   runImagePullAlways,
	}
}

// Rules of image-pull-always.
const (
	pullRuleDaemonSets   = "daemonsets"
	pullRuleDeployments  = "deployments"
	pullRuleStatefulSets = "statefulsets"
	pullRuleRateLimit    = "rate-limited-pulls"
)

// effectivePullPolicy is the policy the API server stores (effectivePolicy),
// and whether it is implied by an unset field: files written by hand or by
// templating tools often leave it unset.
func effectivePullPolicy(c *corev1.Container) (policy corev1.PullPolicy, implied bool) {
	return effectivePolicy(c.Image, c.ImagePullPolicy), c.ImagePullPolicy == ""
}

// floatingTag reports whether an image names no fixed version: no digest,
// and no tag or latest.
func floatingTag(image string) bool {
	_, tag, digest := check.ImageParts(image)
	return digest == "" && (tag == "" || tag == "latest")
}

// pullWorkload is one workload under consideration.
type pullWorkload struct {
	res       snapshot.Resource
	rule      string
	meta      *metav1.ObjectMeta
	spec      *corev1.PodSpec
	scale     int32  // pods it runs (DaemonSet: nodes)
	scaleFrom string // the field scale was read from
	estimate  bool   // scale is estimated, not read
	ds        *appsv1.DaemonSet
	pods      []*snapshot.Pod
}

func runImagePullAlways(ctx *check.Context) ([]finding.Finding, error) {
	rl, err := loadPullRateLimit()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	ix := s.Index()

	var wls []pullWorkload
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		w := pullWorkload{res: snapshot.DaemonSets, rule: pullRuleDaemonSets, ds: d, meta: &d.ObjectMeta, spec: &d.Spec.Template.Spec,
			scale: d.Status.DesiredNumberScheduled, scaleFrom: "status.desiredNumberScheduled",
			pods: ix.PodsControlledBy(snapshot.IDOf(snapshot.DaemonSets.Kind, &d.ObjectMeta))}
		if !daemonSetHasStatus(d) {
			// Files without status: the Nodes in the input that its pods
			// could run on, or else the pods it owns, show its reach.
			if len(s.Nodes) > 0 {
				place := check.DaemonSetPlacement(d)
				n := len(place.Nodes(s.Nodes))
				w.scale, w.estimate = int32(n), true
				w.scaleFrom = fmt.Sprintf("has no status; estimated from the Nodes in the input: %d of %d match its nodeSelector and affinity and tolerate their taints", n, len(s.Nodes))
			}
			if len(w.pods) > 0 && int(w.scale) < len(w.pods) {
				w.scale, w.scaleFrom, w.estimate = int32(len(w.pods)), "pods owned", false
			}
		}
		// A DaemonSet that runs on no node pulls nothing: its status says
		// 0 nodes should run it, or none of the Nodes in the input matches
		// its selection. It becomes a puller when matching nodes join, and
		// that is when kubegap sees it.
		if w.scale == 0 && len(w.pods) == 0 && (daemonSetHasStatus(d) || len(s.Nodes) > 0) {
			continue
		}
		wls = append(wls, w)
	}
	rsOf := map[snapshot.OwnerID][]snapshot.OwnerID{} // Deployment → its ReplicaSets
	for i := range s.ReplicaSets {
		rs := &s.ReplicaSets[i]
		for _, o := range rs.OwnerReferences {
			if o.Controller != nil && *o.Controller && o.Kind == snapshot.Deployments.Kind {
				id := snapshot.RefID(rs.Namespace, o)
				rsOf[id] = append(rsOf[id], snapshot.IDOf(snapshot.ReplicaSets.Kind, &rs.ObjectMeta))
			}
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		w := pullWorkload{res: snapshot.Deployments, rule: pullRuleDeployments, meta: &d.ObjectMeta, spec: &d.Spec.Template.Spec,
			scale: check.SpecReplicas(d.Spec.Replicas), scaleFrom: "spec.replicas"}
		if w.scale < pullAlwaysMinReplicas {
			continue
		}
		for _, rs := range rsOf[snapshot.IDOf(snapshot.Deployments.Kind, &d.ObjectMeta)] {
			w.pods = append(w.pods, ix.PodsControlledBy(rs)...)
		}
		wls = append(wls, w)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		w := pullWorkload{res: snapshot.StatefulSets, rule: pullRuleStatefulSets, meta: &d.ObjectMeta, spec: &d.Spec.Template.Spec,
			scale: check.SpecReplicas(d.Spec.Replicas), scaleFrom: "spec.replicas",
			pods: ix.PodsControlledBy(snapshot.IDOf(snapshot.StatefulSets.Kind, &d.ObjectMeta))}
		if w.scale < pullAlwaysMinReplicas {
			continue
		}
		wls = append(wls, w)
	}

	var out []finding.Finding
	publicReg := func(img string) bool { return slices.Contains(rl.PublicRegistries, check.ImageRegistry(img)) }
	for i := range wls {
		if f, ok := pullWorkloadFinding(ctx, &wls[i], publicReg); ok {
			out = append(out, f)
		}
	}
	out = append(out, pullRateLimitFindings(s, rl)...)
	return out, nil
}

// podSpecContainers lists init and regular containers with their field
// paths.
func podSpecContainers(spec *corev1.PodSpec) (cs []*corev1.Container, paths []string) {
	for i := range spec.InitContainers {
		cs = append(cs, &spec.InitContainers[i])
		paths = append(paths, fmt.Sprintf("initContainers[%d]", i))
	}
	for i := range spec.Containers {
		cs = append(cs, &spec.Containers[i])
		paths = append(paths, fmt.Sprintf("containers[%d]", i))
	}
	return cs, paths
}

func pullWorkloadFinding(ctx *check.Context, w *pullWorkload, publicReg func(string) bool) (finding.Finding, bool) {
	name := w.meta.Namespace + "/" + w.meta.Name
	prefix := fmt.Sprintf("%s %s spec.template.spec.", w.res.Kind, name)
	cs, paths := podSpecContainers(w.spec)

	always := map[string]bool{} // container name → pulls on every start
	var alwaysEv, floatingEv, images []string
	var alwaysItems, floatingItems []finding.EvidenceItem
	wref := finding.ObjectRef{APIVersion: w.res.APIVersion(), Kind: w.res.Kind, Namespace: w.meta.Namespace, Name: w.meta.Name}
	// quote is the container's image and pull policy as the object has them.
	quote := func(path string, c *corev1.Container) finding.EvidenceItem {
		return finding.Quote(wref, finding.Value("spec.template.spec."+path+".image", c.Image),
			finding.Value("spec.template.spec."+path+".imagePullPolicy", string(c.ImagePullPolicy)))
	}
	public := false
	for i, c := range cs {
		if check.IsTemplated(c.Image) {
			// A manifest template: the image is chosen later, so neither the
			// registry nor the policy an unset field implies is known.
			ctx.Incomplete(w.rule, "%s%s.image=%s is an unresolved template placeholder", prefix, paths[i], c.Image)
			continue
		}
		_, _, digest := check.ImageParts(c.Image)
		if digest != "" {
			continue // pinned: the node's copy is the one wanted
		}
		pol, implied := effectivePullPolicy(c)
		switch {
		case pol == corev1.PullAlways && implied:
			always[c.Name] = true
			alwaysEv = append(alwaysEv, fmt.Sprintf("%s%s: imagePullPolicy unset → Always (API default for :latest or untagged)", prefix, paths[i]))
			alwaysItems = append(alwaysItems, quote(paths[i], c))
		case pol == corev1.PullAlways:
			always[c.Name] = true
			alwaysItems = append(alwaysItems, quote(paths[i], c))
		case w.res == snapshot.DaemonSets && floatingTag(c.Image):
			floatingEv = append(floatingEv, fmt.Sprintf("%s%s: image %s has no version tag (pull policy %s)", prefix, paths[i], c.Image, pol))
			floatingItems = append(floatingItems, quote(paths[i], c))
		default:
			continue
		}
		if !slices.Contains(images, c.Image) {
			images = append(images, c.Image)
		}
		if publicReg(c.Image) {
			public = true
		}
	}
	if len(alwaysItems) == 0 && len(floatingItems) == 0 {
		return finding.Finding{}, false
	}

	// Crash-looping containers that pull on every restart.
	refs := check.NewCappedRefs()
	refs.Add(check.ResourceRef(w.res, w.meta.Namespace, w.meta.Name))
	var loopEv []string
	looping := 0
	for _, p := range w.pods {
		for st := range check.ContainerStatuses(p) {
			if st.State.Waiting == nil || st.State.Waiting.Reason != "CrashLoopBackOff" || !always[st.Name] {
				continue
			}
			looping++
			refs.AddPodAndNode(p)
			if len(loopEv) < check.MaxListedObjects/5 {
				loopEv = append(loopEv, fmt.Sprintf("Pod %s/%s status.containerStatuses[%s].state.waiting.reason=CrashLoopBackOff restartCount=%d (node %s)",
					p.Namespace, p.Name, st.Name, st.RestartCount, p.Spec.NodeName))
			}
			break
		}
	}
	if looping > len(loopEv) {
		loopEv = append(loopEv, fmt.Sprintf("… and %d more crash-looping pods", looping-len(loopEv)))
	}

	scaleEv := ""
	var scaleItem *finding.EvidenceItem
	switch {
	case w.estimate:
		scaleEv = fmt.Sprintf("%s %s %s", w.res.Kind, name, w.scaleFrom)
	case w.scale > 0 && w.scaleFrom == "status.desiredNumberScheduled":
		it := finding.Quote(wref, finding.Value(w.scaleFrom, w.scale))
		scaleItem = &it
	case w.scale > 0 && w.scaleFrom == "spec.replicas":
		// replicasOf reads an unset spec.replicas as the API default, 1.
		scaleEv = fmt.Sprintf("%s %s runs %d replicas (spec.replicas; 1 when unset)", w.res.Kind, name, w.scale)
	case w.scale > 0:
		scaleEv = fmt.Sprintf("%s %s %s: %d", w.res.Kind, name, w.scaleFrom, w.scale)
	}
	// "runs on 1000 nodes" for a DaemonSet, "runs 40 pods" otherwise.
	scaleText, runs := fmt.Sprintf("%d pods", w.scale), fmt.Sprintf("runs %d pods", w.scale)
	if w.res == snapshot.DaemonSets {
		scaleText = fmt.Sprintf("%d nodes", w.scale)
		switch {
		case w.estimate:
			scaleText = fmt.Sprintf("an estimated %d nodes", w.scale)
		case w.scale == 0 && !daemonSetHasStatus(w.ds):
			scaleText = "an unknown number of nodes (no status or Nodes in the input)"
		}
		runs = "runs on " + scaleText
	}

	cases := []string{"daemonset-pull-always-nat-ratelimit", "github-sidecar-oom-pull-always-registry"}
	if public {
		cases = append(cases, "docker-hub-pull-rate-limits")
	}
	var (
		sev   finding.Severity
		title string
		msg   string
		fix   string
		ev    []string
	)
	imgs := strings.Join(firstImages(images, 3), ", ")
	var items []finding.EvidenceItem
	if len(alwaysItems) > 0 {
		sev = finding.Medium
		if w.scale >= pullAlwaysHighScale || looping > 0 {
			sev = finding.High
		}
		// Crash loops raise it, and only pods (tied to a Deployment by
		// its ReplicaSets) show them: without them complete, medium is
		// a floor, not the answer.
		if sev == finding.Medium && (!ctx.CompleteIn(snapshot.Pods, w.meta.Namespace) ||
			w.res == snapshot.Deployments && !ctx.CompleteIn(snapshot.ReplicaSets, w.meta.Namespace)) {
			ctx.Incomplete(w.rule, "%s %s: its pods were not all read, and it is high if any of them crash-loops", w.res.Kind, name)
		}
		title = fmt.Sprintf("%s %s pulls its image on every start across %s", w.res.Kind, name, scaleText)
		msg = fmt.Sprintf("%s %s %s and pulls %s on every container start, so every restart and every rollout "+
			"goes back to the registry from each node, even when the image is already there.", w.res.Kind, name, runs, imgs)
		if looping > 0 {
			// How many loop changes by itself: the count and the pods are
			// in the evidence, not the message.
			msg += " Some of its pods are crash-looping: each restart is another pull (the evidence lists them)."
		}
		if public {
			msg += " The image comes from a public registry that limits anonymous pulls per source IP; nodes behind shared NAT share that budget."
		}
		msg += " If the registry is slow, throttled or unreachable, pods that merely restart cannot start again."
		fix = "Pin the image by tag and digest (image: repo:1.2.3@sha256:…) and set imagePullPolicy: IfNotPresent; " +
			"pre-pull or mirror the image in a registry close to the nodes. Keep Always only where credentials must be re-checked on every start."
		ev = append(ev, alwaysEv...)
		ev = append(ev, floatingEv...)
		items = append(append(items, alwaysItems...), floatingItems...)
	} else {
		sev = finding.Low
		if w.scale >= pullAlwaysHighScale {
			sev = finding.Medium
		}
		cases = cases[:1:1]
		if public {
			cases = append(cases, "docker-hub-pull-rate-limits")
		}
		title = fmt.Sprintf("DaemonSet %s runs a floating image tag on %s", name, scaleText)
		msg = fmt.Sprintf("DaemonSet %s runs %s on %s without a version tag or digest. Nodes keep whichever image "+
			"the tag pointed to when they pulled it, so the fleet drifts apart, and any node that pulls again (a new "+
			"node, a pruned image) gets whatever was pushed last.", name, imgs, scaleText)
		fix = "Use a version tag, ideally with its digest, and roll changes out by changing it."
		ev = append(ev, floatingEv...)
		items = append(items, floatingItems...)
	}
	if scaleEv != "" {
		ev = append(ev, scaleEv)
	}
	if scaleItem != nil {
		items = append(items, *scaleItem)
	}
	ev = append(ev, loopEv...)
	f := finding.Finding{
		Check:       "image-pull-always",
		Severity:    sev,
		Title:       title,
		Message:     msg,
		Objects:     refs.List(),
		Evidence:    ev,
		Remediation: fix,
		Cases:       cases,
	}
	f.AddEvidence(items...)
	return f, true
}

func firstImages(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(ss[:n:n], fmt.Sprintf("%d more", len(ss)-n))
}

// daemonSetHasStatus reports whether the input carries a DaemonSet's
// status: files written by hand or by templating tools have none.
func daemonSetHasStatus(d *appsv1.DaemonSet) bool {
	st := &d.Status
	return st.ObservedGeneration > 0 || st.DesiredNumberScheduled > 0 || st.CurrentNumberScheduled > 0 || st.NumberReady > 0
}
