package gitops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	guardID   = "gitops-deletion-guard"
	guardRule = "generated-deletion-cascades"
	guardCase = "argocd-applicationset-transient-error-deletes-apps-2024"
	// guardEtcdCase lost its Applications after etcd turned read-only.
	guardEtcdCase = "argocd-2-8-6-etcd-growth-read-only-mass-app-deletion-2023"
	// resourcesFinalizer on an Application makes its deletion delete what
	// it deployed.
	resourcesFinalizer = "resources-finalizer.argocd.argoproj.io"
	// The controller's binary, found in a container's command or args.
	appSetBinary = "argocd-applicationset-controller"
	envPolicy    = "ARGOCD_APPLICATIONSET_CONTROLLER_POLICY"
	envOverride  = "ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_POLICY_OVERRIDE"
	maxAppsShown = 5
)

func gitopsDeletionGuardCheck() check.Check {
	return check.Check{
		ID:       guardID,
		Title:    "Argo CD ApplicationSets whose controller may delete their Applications, and with them what the Applications deployed",
		Severity: finding.Medium,
		Description: "Reads Argo CD ApplicationSets, the Applications they generated (by owner reference), the " +
			"ApplicationSet controller's Deployment in the same namespace and, when the controller takes its settings " +
			"from there, the argocd/argocd-cmd-params-cm ConfigMap. Reports an ApplicationSet whose effective policy " +
			"lets the controller delete Applications (sync, the default, or create-delete: the controller's --policy, " +
			"or the ApplicationSet's applicationsSync where the controller allows an override) while its Applications " +
			"carry the resources finalizer: a generator run that comes back without an Application, from a transient " +
			"error or a change, deletes the Application and everything it deployed. An applicationsSync the " +
			"controller ignores (no --enable-policy-override) is named as such. A controller setting kubegap cannot " +
			"read (a literal env value, which snapshots redact, or a ConfigMap other than argocd/argocd-cmd-params-cm) " +
			"leaves the rule partial.",
		Reads: []check.Input{
			check.Optional(snapshot.ArgoApplicationSets),
			check.Optional(snapshot.ArgoApplications),
			check.Optional(snapshot.Deployments),
			check.Optional(snapshot.ConfigMaps),
		},
		Rules: []check.Rule{
			{ID: guardRule, Summary: "no ApplicationSet's controller may delete Applications that carry the resources finalizer",
				Needs: []snapshot.Resource{snapshot.ArgoApplicationSets, snapshot.ArgoApplications, snapshot.Deployments, snapshot.ConfigMaps}},
		},
		Cases: check.Prevents(guardCase, guardEtcdCase),
		Run:   runGitopsDeletionGuard,
	}
}

// controllerSetting is one resolved controller setting and the fields
// that show where it came from.
type controllerSetting struct {
	value string // "" when unset: the flag's default
	from  []finding.EvidenceItem
	// unknown, when set, is why the value could not be read.
	unknown string
}

// appSetController is the ApplicationSet controller of one namespace.
type appSetController struct {
	ref      finding.ObjectRef
	policy   controllerSetting
	override controllerSetting
}

func runGitopsDeletionGuard(ctx *check.Context) ([]finding.Finding, error) {
	argo, err := loadArgoFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	appSets := s.CustomObjects(snapshot.ArgoApplicationSets)
	if len(appSets) == 0 {
		return nil, nil
	}
	finalized := finalizedByOwner(s.CustomObjects(snapshot.ArgoApplications))
	configMaps := check.ConfigMapsByKey(s)
	controllers := map[string]*appSetController{}
	var out []finding.Finding
	for _, as := range appSets {
		ns := as.GetNamespace()
		c, seen := controllers[ns]
		if !seen {
			c = findAppSetController(ctx, ns, configMaps)
			controllers[ns] = c
		}
		if f, ok := judgeDeletionGuard(ctx, as, finalized, c, argo.fact); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// findAppSetController finds the Deployment in ns whose container runs the
// ApplicationSet controller and resolves its policy settings; nil when
// there is none in the input.
func findAppSetController(ctx *check.Context, ns string, configMaps map[string]*corev1.ConfigMap) *appSetController {
	s := ctx.Snapshot
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace != ns {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !runsAppSetController(c) {
				continue
			}
			ref := check.Ref("apps/v1", "Deployment", d)
			return &appSetController{
				ref:      ref,
				policy:   resolveSetting(ctx, ref, c, "policy", envPolicy, configMaps),
				override: resolveSetting(ctx, ref, c, "enable-policy-override", envOverride, configMaps),
			}
		}
	}
	return nil
}

func runsAppSetController(c corev1.Container) bool {
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if a == appSetBinary || strings.HasSuffix(a, "/"+appSetBinary) {
			return true
		}
	}
	return false
}

// resolveSetting reads a controller flag: --flag=value or --flag value in
// command or args (a bare boolean flag is true), else the env variable the
// flag defaults from, else unset. An env value from a ConfigMap key is
// read when the ConfigMap is one kubegap reads.
func resolveSetting(ctx *check.Context, ref finding.ObjectRef, c corev1.Container, flag, env string, configMaps map[string]*corev1.ConfigMap) controllerSetting {
	for _, list := range []struct {
		field string
		argv  []string
	}{{"command", c.Command}, {"args", c.Args}} {
		for i, a := range list.argv {
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.HasPrefix(a, "-") || name != flag {
				continue
			}
			path := check.ContainerField(ref.Kind, "", c.Name, fmt.Sprintf("%s[%d]", list.field, i))
			from := []finding.EvidenceItem{finding.Quote(ref, finding.Value(path, a))}
			switch {
			case hasValue:
			case i+1 < len(list.argv) && !strings.HasPrefix(list.argv[i+1], "-"):
				value = list.argv[i+1]
				from = append(from, finding.Quote(ref, finding.Value(
					check.ContainerField(ref.Kind, "", c.Name, fmt.Sprintf("%s[%d]", list.field, i+1)), value)))
			default:
				value = "true"
			}
			return controllerSetting{value: value, from: from}
		}
	}
	for _, e := range c.Env {
		if e.Name != env {
			continue
		}
		envPath := check.ContainerField(ref.Kind, "", c.Name, "env[name="+env+"]")
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
			if e.ValueFrom == nil && e.Value == "" {
				return controllerSetting{}
			}
			return controllerSetting{unknown: fmt.Sprintf("%s sets %s from a literal value or another source, which kubegap does not keep", ref, env)}
		}
		key := e.ValueFrom.ConfigMapKeyRef
		name := ref.Namespace + "/" + key.Name
		from := []finding.EvidenceItem{finding.Quote(ref, finding.Value(envPath+".valueFrom.configMapKeyRef.name", key.Name),
			finding.Value(envPath+".valueFrom.configMapKeyRef.key", key.Key))}
		if !slices.Contains(snapshot.NamedConfigMaps, name) {
			return controllerSetting{unknown: fmt.Sprintf("%s takes %s from ConfigMap %s, which kubegap does not read", ref, env, name)}
		}
		cm := configMaps[name]
		if cm == nil {
			if !ctx.Complete(snapshot.ConfigMaps) {
				return controllerSetting{unknown: fmt.Sprintf("ConfigMap %s, which %s takes %s from, is not in the input", name, ref, env)}
			}
			return controllerSetting{from: from} // known absent: the flag's default
		}
		cmRef := finding.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}
		v, has := cm.Data[key.Key]
		field := finding.Absent("data[" + key.Key + "]")
		if has {
			field = finding.Entry("data["+key.Key+"]", v)
		}
		from = append(from, finding.Quote(cmRef, field))
		return controllerSetting{value: v, from: from}
	}
	return controllerSetting{}
}

// deletesApplications: the policies that let the controller delete the
// Applications a generator no longer returns ("" is the default, sync).
func deletesApplications(policy string) bool {
	return policy == "" || policy == "sync" || policy == "create-delete"
}

func judgeDeletionGuard(ctx *check.Context, as unstructured.Unstructured, finalized map[string][]*unstructured.Unstructured, c *appSetController, facts map[string]string) (finding.Finding, bool) {
	name := appSetKey(as.GetNamespace(), as.GetName())
	if c == nil {
		if !ctx.CompleteIn(snapshot.Deployments, as.GetNamespace()) {
			ctx.Incomplete(guardRule, "the Deployments of namespace %s were not read completely, so the policy of the ApplicationSet "+
				"controller that serves %s is unknown", as.GetNamespace(), name)
		} else {
			ctx.Incomplete(guardRule, "no Deployment in namespace %s runs %s, so the policy of the controller that serves %s is unknown",
				as.GetNamespace(), appSetBinary, name)
		}
		return finding.Finding{}, false
	}
	for _, st := range []controllerSetting{c.policy, c.override} {
		if st.unknown != "" {
			ctx.Incomplete(guardRule, "%s", st.unknown)
			return finding.Finding{}, false
		}
	}
	own, _, _ := unstructured.NestedString(as.Object, "spec", "syncPolicy", "applicationsSync")
	override, _ := strconv.ParseBool(c.override.value)
	policy := c.policy.value
	if override && own != "" {
		policy = own
	}
	if !deletesApplications(policy) {
		return finding.Finding{}, false
	}
	cascading := finalized[name]
	if len(cascading) == 0 {
		if !ctx.CompleteIn(snapshot.ArgoApplications, as.GetNamespace()) {
			ctx.Incomplete(guardRule, "the Applications of namespace %s were not read completely, so whether those of %s "+
				"carry the resources finalizer is unknown", as.GetNamespace(), name)
		}
		return finding.Finding{}, false
	}
	return deletionGuardFinding(as, c, own, override, policy, cascading, facts), true
}

// finalizedByOwner maps each owning ApplicationSet (namespace/name) to
// its Applications that carry the resources finalizer, in one pass.
func finalizedByOwner(apps []unstructured.Unstructured) map[string][]*unstructured.Unstructured {
	out := map[string][]*unstructured.Unstructured{}
	for i := range apps {
		app := &apps[i]
		if !slices.Contains(app.GetFinalizers(), resourcesFinalizer) {
			continue
		}
		for _, ref := range app.GetOwnerReferences() {
			if ref.Kind == snapshot.ArgoApplicationSets.Kind {
				k := appSetKey(app.GetNamespace(), ref.Name)
				out[k] = append(out[k], app)
			}
		}
	}
	return out
}

func deletionGuardFinding(as unstructured.Unstructured, c *appSetController, own string, override bool, policy string,
	cascading []*unstructured.Unstructured, facts map[string]string) finding.Finding {
	name := appSetKey(as.GetNamespace(), as.GetName())
	ref := check.Ref("argoproj.io/v1alpha1", "ApplicationSet", &as)
	preserve, hasPreserve, _ := unstructured.NestedBool(as.Object, "spec", "syncPolicy", "preserveResourcesOnDeletion")
	fields := []finding.Field{finding.Value("spec.syncPolicy.applicationsSync", own)}
	if hasPreserve {
		fields = append(fields, finding.Value("spec.syncPolicy.preserveResourcesOnDeletion", preserve))
	}
	shown := policy
	if shown == "" {
		shown = "sync (the default)"
	}
	ignored := ""
	if own != "" && !override {
		ignored = fmt.Sprintf(" Its own applicationsSync %s does not apply: the controller uses an ApplicationSet's "+
			"policy only with --enable-policy-override, which %s does not set.", own, c.ref)
	}
	f := finding.Finding{
		Check:    guardID,
		Rule:     guardRule,
		Severity: finding.Medium,
		Title: fmt.Sprintf("ApplicationSet %s may have its controller delete %s, and with them what they deployed",
			name, check.Plural(len(cascading), "Application", "Applications")),
		Message: fmt.Sprintf("The ApplicationSet controller %s runs with policy %s for %s, so it deletes any Application a "+
			"generator run no longer returns, and %s it generated %s %s, so deleting one deletes every resource it "+
			"deployed. A run that comes back short, from a failed list or a brief loss of the API (one cited case), "+
			"or from a change to the generator's source, removes those workloads; in the other cited case every "+
			"Application without preserveResourcesOnDeletion was deleted after etcd turned read-only.%s",
			c.ref, shown, name, check.Plural(len(cascading), "Application", "Applications"),
			map[bool]string{true: "carries", false: "carry"}[len(cascading) == 1], resourcesFinalizer, ignored),
		Objects: []finding.ObjectRef{ref, c.ref},
		Remediation: "Stop the controller from deleting Applications: set applicationsetcontroller.policy: create-update in " +
			"argocd-cmd-params-cm (or --policy create-update), or enable applicationsetcontroller.enable.policy.override " +
			"and set spec.syncPolicy.applicationsSync: create-update on the ApplicationSet. Add " +
			"spec.syncPolicy.preserveResourcesOnDeletion: true so that an Application deleted anyway leaves its resources, " +
			"and check that the generated Applications no longer carry " + resourcesFinalizer + ".",
		Cases: []string{guardCase, guardEtcdCase},
	}
	f.AddEvidence(finding.Quote(ref, fields...))
	for _, st := range []controllerSetting{c.policy, c.override} {
		f.AddEvidence(st.from...)
	}
	var g finding.Grouper
	for i, app := range cascading {
		if i == maxAppsShown {
			break
		}
		g.Add(check.Ref("argoproj.io/v1alpha1", "Application", app), finding.Value("metadata.finalizers", finding.JSONText(app.GetFinalizers())))
	}
	f.AddEvidence(g.Items()...)
	names := make([]string, 0, len(cascading))
	for _, app := range cascading {
		names = append(names, app.GetName())
	}
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("effective policy %s; Applications with %s: %s", shown, resourcesFinalizer, check.ListText(names, maxAppsShown)),
		facts["controller-policy"], facts["generated-deletion"])
	return f
}
