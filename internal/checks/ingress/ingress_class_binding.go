package ingress

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/ingress-class-binding.yaml
var bindingYAML []byte

type controllerFacts struct {
	Name                     string   `json:"name"`
	DefaultControllerClass   string   `json:"defaultControllerClass"`
	DefaultIngressClass      string   `json:"defaultIngressClass"`
	DefaultWatchWithoutClass bool     `json:"defaultWatchWithoutClass"`
	ClassRequiredFrom        string   `json:"classRequiredFrom"`
	Sources                  []string `json:"sources"`
}

// classBindingFacts is data/ingress-class-binding.yaml.
type classBindingFacts struct {
	Controllers []controllerFacts `json:"controllers"`

	// nginx is the ingress-nginx row, the controller the checks judge.
	nginx *controllerFacts
}

var loadNginxFacts = check.Facts("ingress controller facts", bindingYAML, func(f *classBindingFacts) error {
	for i := range f.Controllers {
		if f.Controllers[i].Name == "ingress-nginx" {
			f.nginx = &f.Controllers[i]
			return nil
		}
	}
	return errors.New("ingress controller facts: no ingress-nginx row")
})

// Annotations that bind an Ingress or mark a default class.
const (
	classAnnotation   = "kubernetes.io/ingress.class"
	defaultAnnotation = "ingressclass.kubernetes.io/is-default-class"
)

// Rules of ingress-class-binding.
const (
	ruleClassMissing = "class-missing"
	ruleUnserved     = "class-without-controller"
	ruleClassless    = "classless-ingresses"
)

func ingressClassBindingCheck() check.Check {
	return check.Check{
		ID:       "ingress-class-binding",
		Title:    "Ingresses no controller will serve",
		Severity: finding.High,
		Description: "Relates Ingresses, IngressClasses and the ingress-nginx controllers whose flags are visible in " +
			"Deployment and DaemonSet templates. High: an Ingress whose spec.ingressClassName names no IngressClass; " +
			"an IngressClass for ingress-nginx (spec.controller containing ingress-nginx) that no running " +
			"ingress-nginx claims through --controller-class (default k8s.io/ingress-nginx) while Ingresses use " +
			"it (low when none does); Ingresses with neither ingressClassName nor the kubernetes.io/ingress.class " +
			"annotation while every ingress-nginx 1.0 or later runs without --watch-ingress-without-class: from " +
			"1.0 such Ingresses are ignored, and a default IngressClass is only written into Ingresses created " +
			"after it. Medium: class-less Ingresses with no default IngressClass and no ingress-nginx in view; " +
			"the API asks controllers to ignore them. Other controllers' flags (Traefik, cloud built-in " +
			"controllers such as GKE's, which serves class-less Ingresses) are not read: Ingresses of their " +
			"classes are not judged, and the class-less rule says when such a controller could be serving them.",
		Reads: []check.Input{{Resource: snapshot.Ingresses}, {Resource: snapshot.IngressClasses},
			{Resource: snapshot.Deployments}, {Resource: snapshot.DaemonSets}},
		Rules: []check.Rule{
			{ID: ruleClassMissing, Summary: "Ingresses naming an IngressClass that does not exist",
				Needs: []snapshot.Resource{snapshot.Ingresses, snapshot.IngressClasses}},
			{ID: ruleUnserved, Summary: "ingress-nginx IngressClasses no running ingress-nginx claims",
				Needs: []snapshot.Resource{snapshot.IngressClasses, snapshot.Deployments, snapshot.DaemonSets}},
			{ID: ruleClassless, Summary: "Ingresses without a class that no visible controller takes",
				Needs: []snapshot.Resource{snapshot.Ingresses, snapshot.IngressClasses, snapshot.Deployments, snapshot.DaemonSets}},
		},
		Cases: check.Prevents("ingress-nginx-v1-ignores-classless-ingresses-2021"),
		Run:   runIngressClassBinding,
	}
}

// nginxController is one ingress-nginx controller workload and its flags.
type nginxController struct {
	ref               finding.ObjectRef
	controllerClass   string
	configMap         string // --configmap, as written ("$(POD_NAMESPACE)/name")
	defaultSSLCert    string // --default-ssl-certificate, as written
	ingressClass      string // --ingress-class, as written
	watchWithoutClass bool
	version           check.KubeVersion
	versionKnown      bool
	image             string
}

// findNginxControllers reads ingress-nginx controllers from workload
// templates: a container whose command or arguments run
// /nginx-ingress-controller, or whose image is ingress-nginx/controller.
func findNginxControllers(s *snapshot.Snapshot, facts *controllerFacts) []nginxController {
	var out []nginxController
	// A container is judged from its image and arguments in place; its
	// arguments are joined and the workload's reference built only for
	// an ingress-nginx container.
	runsController := func(argv []string) bool {
		for _, a := range argv {
			if strings.HasSuffix(a, "/nginx-ingress-controller") {
				return true
			}
		}
		return false
	}
	scan := func(apiVersion, kind string, meta *metav1.ObjectMeta, replicas *int32, spec *corev1.PodSpec) {
		for j := range spec.Containers {
			c := &spec.Containers[j]
			repo, tag, _ := check.ImageParts(c.Image)
			if !strings.HasSuffix(repo, "ingress-nginx/controller") && !runsController(c.Command) && !runsController(c.Args) {
				continue
			}
			if replicas != nil && *replicas == 0 {
				return // scaled to zero: read only for a controller container
			}
			argv := append(append([]string{}, c.Command...), c.Args...)
			ref := check.Ref(apiVersion, kind, meta)
			n := nginxController{ref: ref, controllerClass: facts.DefaultControllerClass,
				watchWithoutClass: facts.DefaultWatchWithoutClass, image: c.Image}
			n.version, n.versionKnown = check.ParseKubeVersion(tag)
			for _, a := range argv {
				name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
				switch name {
				case "controller-class":
					n.controllerClass = val
				case "configmap":
					n.configMap = val
				case "default-ssl-certificate":
					n.defaultSSLCert = val
				case "ingress-class":
					n.ingressClass = val
				case "watch-ingress-without-class":
					// A bare boolean flag is true; a value that is not a
					// boolean makes the controller refuse to start.
					n.watchWithoutClass = !hasVal
					if b, err := strconv.ParseBool(val); hasVal && err == nil {
						n.watchWithoutClass = b
					}
				}
			}
			out = append(out, n)
			return
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		scan("apps/v1", "Deployment", &d.ObjectMeta, d.Spec.Replicas, &d.Spec.Template.Spec)
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		scan("apps/v1", "DaemonSet", &d.ObjectMeta, nil, &d.Spec.Template.Spec)
	}
	return out
}

func runIngressClassBinding(ctx *check.Context) ([]finding.Finding, error) {
	binding, err := loadNginxFacts()
	if err != nil {
		return nil, err
	}
	facts := binding.nginx
	s := ctx.Snapshot
	if len(s.Ingresses) == 0 && len(s.IngressClasses) == 0 && !ctx.Present(snapshot.Ingresses) && !ctx.Present(snapshot.IngressClasses) {
		return nil, check.NotEvaluated("the input has no Ingresses or IngressClasses")
	}
	required, _ := check.ParseKubeVersion(facts.ClassRequiredFrom)
	classes := map[string]*networkingv1.IngressClass{}
	var defaults []string
	for i := range s.IngressClasses {
		c := &s.IngressClasses[i]
		classes[c.Name] = c
		if c.Annotations[defaultAnnotation] == "true" {
			defaults = append(defaults, c.Name)
		}
	}
	controllers := findNginxControllers(s, facts)
	workloadsComplete := ctx.Complete(snapshot.Deployments) && ctx.Complete(snapshot.DaemonSets)
	classesComplete := ctx.Complete(snapshot.IngressClasses)

	usedBy := map[string][]*networkingv1.Ingress{}
	var missing, classless []*networkingv1.Ingress
	for i := range s.Ingresses {
		ing := &s.Ingresses[i]
		name := ""
		if ing.Spec.IngressClassName != nil {
			name = *ing.Spec.IngressClassName
		}
		if ann := ing.Annotations[classAnnotation]; ann != "" {
			continue // the annotation takes precedence; its controllers are not all visible
		}
		switch {
		case name == "":
			classless = append(classless, ing)
		case classes[name] != nil:
			usedBy[name] = append(usedBy[name], ing)
		case classesComplete:
			missing = append(missing, ing)
		default:
			ctx.Incomplete(ruleClassMissing, "IngressClass %s is not in the input, which does not hold every IngressClass", name)
		}
	}

	var out []finding.Finding
	for _, ing := range missing {
		f := finding.Finding{
			Check: "ingress-class-binding", Severity: finding.High,
			Title:   fmt.Sprintf("Ingress %s/%s names IngressClass %s, which does not exist", ing.Namespace, ing.Name, *ing.Spec.IngressClassName),
			Message: "No controller will serve an Ingress whose class does not resolve to an IngressClass; its hosts and paths are not routed.",
			Objects: []finding.ObjectRef{check.Ref("networking.k8s.io/v1", "Ingress", ing)},
			Evidence: []string{fmt.Sprintf("spec.ingressClassName %q; IngressClasses in the cluster: %s", *ing.Spec.IngressClassName,
				orNone(slices.Sorted(maps.Keys(classes))))},
			Remediation: "Point spec.ingressClassName at an existing IngressClass, or create the IngressClass for the intended controller.",
			Cases:       []string{"ingress-nginx-v1-ignores-classless-ingresses-2021"},
		}
		f.AddEvidence(finding.Quote(f.Objects[0], finding.Value("spec.ingressClassName", *ing.Spec.IngressClassName)))
		out = append(out, f)
	}
	out = append(out, unservedClassFindings(ctx, s, controllers, usedBy, workloadsComplete)...)
	if f, ok := classlessFinding(ctx, facts, classless, controllers, required, defaults, classesComplete, workloadsComplete); ok {
		out = append(out, f)
	}
	return out, nil
}

func unservedClassFindings(ctx *check.Context, s *snapshot.Snapshot, controllers []nginxController,
	usedBy map[string][]*networkingv1.Ingress, workloadsComplete bool) []finding.Finding {
	claimed := map[string]bool{}
	for _, n := range controllers {
		claimed[n.controllerClass] = true
	}
	var out []finding.Finding
	for i := range s.IngressClasses {
		c := &s.IngressClasses[i]
		if !strings.Contains(c.Spec.Controller, "ingress-nginx") || claimed[c.Spec.Controller] {
			continue
		}
		if !workloadsComplete {
			ctx.Incomplete(ruleUnserved, "IngressClass %s: the input does not hold every Deployment and DaemonSet, so its controller may run unseen", c.Name)
			continue
		}
		users := usedBy[c.Name]
		sev := finding.Low
		if len(users) > 0 {
			sev = finding.High
		}
		objs := []finding.ObjectRef{check.Ref("networking.k8s.io/v1", "IngressClass", c)}
		for i, ing := range users {
			if i == check.MaxListedObjects {
				break
			}
			objs = append(objs, check.Ref("networking.k8s.io/v1", "Ingress", ing))
		}
		var seen []string
		for _, n := range controllers {
			seen = append(seen, fmt.Sprintf("%s (--controller-class %s)", n.ref, n.controllerClass))
		}
		f := finding.Finding{
			Check: "ingress-class-binding", Severity: sev,
			Title: fmt.Sprintf("IngressClass %s (controller %s) is claimed by no running ingress-nginx; %s use it",
				c.Name, c.Spec.Controller, check.Plural(len(users), "Ingress", "Ingresses")),
			Message: "ingress-nginx serves an Ingress only when its IngressClass's spec.controller equals the controller's " +
				"--controller-class. No running ingress-nginx has this value, so Ingresses of this class are not routed.",
			Objects:     objs,
			Evidence:    []string{"ingress-nginx controllers running: " + orNone(seen)},
			Remediation: "Set --controller-class of the intended ingress-nginx to the class's spec.controller (or fix the class), or remove the unused class.",
			Cases:       []string{"ingress-nginx-v1-ignores-classless-ingresses-2021"},
		}
		f.AddEvidence(finding.Quote(objs[0], finding.Value("spec.controller", c.Spec.Controller)))
		out = append(out, f)
	}
	return out
}

func classlessFinding(ctx *check.Context, facts *controllerFacts, classless []*networkingv1.Ingress, controllers []nginxController,
	required check.KubeVersion, defaults []string, classesComplete, workloadsComplete bool) (finding.Finding, bool) {
	if len(classless) == 0 {
		return finding.Finding{}, false
	}
	var objs []finding.ObjectRef
	for i, ing := range classless {
		if i == check.MaxListedObjects {
			break
		}
		objs = append(objs, check.Ref("networking.k8s.io/v1", "Ingress", ing))
	}
	names := make([]string, 0, len(classless))
	for _, ing := range classless {
		names = append(names, ing.Namespace+"/"+ing.Name)
	}
	ev := []string{fmt.Sprintf("%s without spec.ingressClassName or the %s annotation: %s",
		check.Plural(len(classless), "Ingress", "Ingresses"), classAnnotation, check.ListText(names, 10))}
	// The class-less Ingresses, quoted: neither field is there.
	var noClass finding.Grouper
	for _, ing := range classless {
		noClass.Add(check.Ref("networking.k8s.io/v1", "Ingress", ing), finding.Absent("spec.ingressClassName"),
			finding.Absent("metadata.annotations["+classAnnotation+"]"))
	}
	if len(controllers) > 0 {
		modern, unknown := 0, 0
		for _, n := range controllers {
			if n.watchWithoutClass {
				return finding.Finding{}, false // this controller takes them
			}
			switch {
			case !n.versionKnown:
				unknown++
			case !n.version.Less(required):
				modern++
			}
			version := "version unknown from its image tag"
			if n.versionKnown {
				version = "version " + n.version.String()
			}
			ev = append(ev, fmt.Sprintf("%s runs ingress-nginx (%s, %s) without --watch-ingress-without-class (default %v)",
				n.ref, n.image, version, facts.DefaultWatchWithoutClass))
			objs = append(objs, n.ref)
		}
		if modern < len(controllers) {
			if unknown > 0 {
				ctx.Incomplete(ruleClassless, "the version of %d ingress-nginx controllers is not known from their image tags", unknown)
			}
			return finding.Finding{}, false // an older controller may still take them
		}
		ev = append(ev, "sources: "+strings.Join(facts.Sources, " "))
		f := finding.Finding{
			Check: "ingress-class-binding", Severity: finding.High,
			Title: fmt.Sprintf("%s without a class are ignored by ingress-nginx %s or later", check.Plural(len(classless), "Ingress", "Ingresses"), facts.ClassRequiredFrom),
			Message: "From ingress-nginx 1.0 an Ingress must name its class; Ingresses without one are skipped unless the " +
				"controller runs with --watch-ingress-without-class=true. Marking an IngressClass default later does not " +
				"fix Ingresses that already exist. A controller outside this check's view that takes class-less " +
				"Ingresses (a cloud's built-in one) may serve them instead, which is rarely what was meant.",
			Objects:     objs,
			Evidence:    ev,
			Remediation: "Set spec.ingressClassName on these Ingresses, or start the intended ingress-nginx with --watch-ingress-without-class=true.",
			Cases:       []string{"ingress-nginx-v1-ignores-classless-ingresses-2021"},
		}
		f.AddEvidence(noClass.Items()...)
		return f, true
	}
	if len(defaults) > 0 || !classesComplete || !workloadsComplete {
		if len(defaults) == 0 {
			ctx.Incomplete(ruleClassless, "IngressClasses, Deployments or DaemonSets are not all in the input: a default class or a controller may exist")
		}
		return finding.Finding{}, false
	}
	ev = append(ev, "no IngressClass is annotated "+defaultAnnotation+"=true; no ingress-nginx controller is in view")
	f := finding.Finding{
		Check: "ingress-class-binding", Severity: finding.Medium,
		Title: fmt.Sprintf("%s without a class, and no default IngressClass", check.Plural(len(classless), "Ingress", "Ingresses")),
		Message: "The Ingress API asks controllers to ignore Ingresses that specify no class, and no IngressClass is marked " +
			"default. Only a controller configured to take class-less Ingresses (some cloud built-in controllers do) serves them.",
		Objects:     objs,
		Evidence:    ev,
		Remediation: "Set spec.ingressClassName on these Ingresses to the class of the controller meant to serve them.",
		Cases:       []string{"ingress-nginx-v1-ignores-classless-ingresses-2021"},
	}
	f.AddEvidence(noClass.Items()...)
	return f, true
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return check.ListText(items, 10)
}
