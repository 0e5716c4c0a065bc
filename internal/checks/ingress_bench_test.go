package checks_test

import (
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// ingressBenchChecks are the checks BenchmarkIngressChecks times.
var ingressBenchChecks = checks.BenchIDs("BenchmarkIngressChecks",
	"ingress-backend-termination", "ingress-controller-resilience", "ingress-nginx-legacy-tls", "external-dns-routing", "webhook-blast-radius",
	"default-certificate-hosts", "addon-end-of-life", "ingress-nginx-path-validation",
	"ingress-nginx-snippet-gates")

// ingressSnapshot is areaSnapshot with a Service per Deployment, the 2,000
// Ingresses routing to them (the class-less half through GKE's gce class,
// with no preStop hooks: findings), and a Kyverno webhook on Service writes
// whose backend is single, and a one-replica ingress-nginx without a memory
// request that asks for TLSv1.1 its OpenSSL 3 build does not offer, and an
// external-dns v0.10 on AWS with one Ingress's set-identifier lacking a
// routing policy, and the nginx-class half of the Ingresses in tls
// sections without a secretName, falling back to a default certificate
// whose Certificate names other hosts, with a regex path under Prefix.
func ingressSnapshot() *snapshot.Snapshot {
	s := areaSnapshot()
	for i := range s.Deployments {
		d := &s.Deployments[i]
		d.Spec.Template.Labels = map[string]string{"app": d.Name}
		s.Services = append(s.Services, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": d.Name}}})
	}
	for i := range s.Ingresses {
		ing := &s.Ingresses[i]
		d := s.Deployments[i%len(s.Deployments)]
		ing.Namespace = d.Namespace
		ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: d.Name}}
		if ing.Spec.IngressClassName == nil {
			ing.Annotations = map[string]string{"kubernetes.io/ingress.class": "gce"}
		}
	}
	fail := admissionv1.Fail
	s.ValidatingWebhookConfigurations = append(s.ValidatingWebhookConfigurations, admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kyverno-resource"},
		Webhooks: []admissionv1.ValidatingWebhook{{Name: "validate.kyverno.svc-fail", FailurePolicy: &fail,
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}}}},
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "kyverno", Name: "kyverno-svc"}}}},
	})
	one := int32(1)
	s.Services = append(s.Services, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kyverno-svc", Namespace: "kyverno"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "kyverno"}}})
	s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "kyverno", Namespace: "kyverno"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "kyverno"}}}}})
	s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingress-nginx"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ingress-nginx"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: "registry.k8s.io/ingress-nginx/controller:v1.11.3",
					Args: []string{"/nginx-ingress-controller", "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
						"--default-ssl-certificate=$(POD_NAMESPACE)/default-tls"}}}}}}})
	for i := range s.Ingresses {
		if ing := &s.Ingresses[i]; ing.Spec.IngressClassName != nil {
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{ing.Name + ".apps.example.org"}}}
			// A rewrite path under Prefix, which strict path validation
			// refuses (ingress-nginx-path-validation).
			prefix := networkingv1.PathTypePrefix
			ing.Spec.Rules = []networkingv1.IngressRule{{Host: ing.Name + ".apps.example.org", IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/api(/|$)(.*)", PathType: &prefix}}}}}}
			// A snippet the 1.11 controller takes only by the risk-level
			// default 1.12 changes (ingress-nginx-snippet-gates).
			if ing.Annotations == nil {
				ing.Annotations = map[string]string{}
			}
			ing.Annotations["nginx.ingress.kubernetes.io/configuration-snippet"] = snapshot.Redacted
		}
	}
	s.AddCustom(snapshot.CertManagerCertificates, []unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": map[string]any{"name": "default", "namespace": "ingress-nginx"},
		"spec": map[string]any{"secretName": "default-tls", "dnsNames": []any{"*.apps.other.example.org"}}}}})
	s.ConfigMaps = append(s.ConfigMaps, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
		Data: map[string]string{"ssl-protocols": "TLSv1.1 TLSv1.2", "allow-snippet-annotations": "true"}})
	s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "external-dns", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "external-dns", Image: "registry.k8s.io/external-dns/external-dns:v0.10.2", Args: []string{"--provider=aws"}}}}}}})
	s.Ingresses[0].Annotations = map[string]string{"external-dns.alpha.kubernetes.io/set-identifier": "green"}
	return s
}

// BenchmarkIngressChecks times the ingress termination and webhook checks
// at 5,000 nodes and 100,000 pods (each must stay under 0.5 s):
// go test -run NONE -bench IngressChecks ./internal/checks/
func BenchmarkIngressChecks(b *testing.B) {
	benchEach(b, ingressSnapshot(), ingressBenchChecks, 1)
}
