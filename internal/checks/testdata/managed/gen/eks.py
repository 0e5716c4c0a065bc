import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

c = Cluster("eks", "2026-11-23T14:30:00Z")
c.pod_cidr = "192.168.40"
ECR = "602401143452.dkr.ecr.us-west-2.amazonaws.com"
for ns in ("default", "kube-node-lease", "kube-public", "kube-system"):
    c.namespace(ns)

# One managed node group on the AL2023 standard AMI of release v20260714
# (awslabs/amazon-eks-ami CHANGELOG): Kubernetes 1.35.6, kernel 6.12.94,
# containerd 2.2.4, source AMI al2023-ami-minimal-2023.12.20260710.0.
KUBELET = "v1.35.6-eks-3a1f9c2"
nodes = []
for i, (zone, ip) in enumerate((("us-west-2a", "192.168.12.81"), ("us-west-2b", "192.168.45.17"), ("us-west-2c", "192.168.77.203"))):
    name = f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal"
    inst = "i-0" + hexid(16, "eks", "instance", name)
    labels = {
        "eks.amazonaws.com/nodegroup": "default-ng", "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup-image": "ami-0" + hexid(16, "eks", "ami"),
        "eks.amazonaws.com/sourceLaunchTemplateId": "lt-0" + hexid(16, "eks", "lt"),
        "eks.amazonaws.com/sourceLaunchTemplateVersion": "1",
        "alpha.eksctl.io/cluster-name": "prod", "alpha.eksctl.io/nodegroup-name": "default-ng",
        "node.kubernetes.io/instance-type": "m6i.xlarge", "beta.kubernetes.io/instance-type": "m6i.xlarge",
        "topology.kubernetes.io/region": "us-west-2", "failure-domain.beta.kubernetes.io/region": "us-west-2",
        "topology.kubernetes.io/zone": zone, "failure-domain.beta.kubernetes.io/zone": zone,
        "topology.k8s.aws/zone-id": f"usw2-az{i + 1}",
        "k8s.io/cloud-provider-aws": hexid(32, "eks", "cluster"),
    }
    c.node(name, labels, f"aws:///{zone}/{inst}",
           {"osImage": "Amazon Linux 2023.12.20260710", "kernelVersion": "6.12.94-123.180.amzn2023.x86_64",
            "containerRuntimeVersion": "containerd://2.2.4", "kubeletVersion": KUBELET},
           ip, capacity={"cpu": "4", "memory": "15896628Ki", "pods": "58", "ephemeral-storage": "83873772Ki"}, reserved_memory_ki=eks_reserved_ki)
    nodes.append(c.nodes[-1])

NOT_FARGATE = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                          {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                          {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["fargate", "hybrid", "auto"]}]}]}}}

# aws-node: the VPC CNI DaemonSet of config/master/aws-k8s-cni.yaml (v1.23.1).
cni_env = [{"name": k, "value": v} for k, v in (
    ("ADDITIONAL_ENI_TAGS", "{}"), ("AWS_VPC_CNI_NODE_PORT_SUPPORT", "true"), ("AWS_VPC_ENI_MTU", "9001"),
    ("AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG", "false"), ("AWS_VPC_K8S_CNI_EXTERNALSNAT", "false"),
    ("AWS_VPC_K8S_CNI_LOGLEVEL", "DEBUG"), ("AWS_VPC_K8S_CNI_LOG_FILE", "/host/var/log/aws-routed-eni/ipamd.log"),
    ("AWS_VPC_K8S_CNI_RANDOMIZESNAT", "prng"), ("AWS_VPC_K8S_CNI_VETHPREFIX", "eni"),
    ("AWS_VPC_K8S_PLUGIN_LOG_FILE", "/var/log/aws-routed-eni/plugin.log"), ("AWS_VPC_K8S_PLUGIN_LOG_LEVEL", "DEBUG"),
    ("DISABLE_INTROSPECTION", "false"), ("DISABLE_METRICS", "false"), ("DISABLE_NETWORK_RESOURCE_PROVISIONING", "false"),
    ("ENABLE_IPv4", "true"), ("ENABLE_IPv6", "false"), ("ENABLE_POD_ENI", "false"), ("ENABLE_PREFIX_DELEGATION", "false"),
    ("ENABLE_SUBNET_DISCOVERY", "true"), ("NETWORK_POLICY_ENFORCING_MODE", "standard"), ("VPC_CNI_VERSION", "v1.23.1"),
    ("WARM_ENI_TARGET", "1"), ("WARM_PREFIX_TARGET", "1"))]
cni_env += [{"name": "MY_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
            {"name": "MY_POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]
grpc_probe = {"exec": {"command": ["/app/grpc-health-probe", "-addr=unix:///var/run/aws-node/ipamd.sock",
                                   "-connect-timeout=5s", "-rpc-timeout=5s"]}, "timeoutSeconds": 10}
aws_node = {"metadata": {"labels": {"app.kubernetes.io/instance": "aws-vpc-cni", "app.kubernetes.io/name": "aws-node", "k8s-app": "aws-node"}},
            "spec": {"priorityClassName": "system-node-critical", "serviceAccountName": "aws-node", "hostNetwork": True,
                     "terminationGracePeriodSeconds": 10, "tolerations": [{"operator": "Exists"}], "affinity": NOT_FARGATE,
                     "initContainers": [ctr("aws-vpc-cni-init", f"{ECR}/amazon-k8s-cni-init:v1.23.1",
                                            env=[{"name": "DISABLE_TCP_EARLY_DEMUX", "value": "false"}, {"name": "ENABLE_IPv6", "value": "false"}],
                                            securityContext={"privileged": True}, resources={"requests": {"cpu": "25m"}},
                                            volumeMounts=[{"name": "cni-bin-dir", "mountPath": "/host/opt/cni/bin"}])],
                     "containers": [
                         ctr("aws-node", f"{ECR}/amazon-k8s-cni:v1.23.1", env=cni_env, resources={"requests": {"cpu": "25m"}},
                             ports=[{"containerPort": 61678, "hostPort": 61678, "name": "metrics", "protocol": "TCP"}],
                             livenessProbe=dict(grpc_probe, initialDelaySeconds=60), readinessProbe=dict(grpc_probe, initialDelaySeconds=1),
                             securityContext={"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}},
                             volumeMounts=[{"name": "cni-bin-dir", "mountPath": "/host/opt/cni/bin"},
                                           {"name": "cni-net-dir", "mountPath": "/host/etc/cni/net.d"},
                                           {"name": "log-dir", "mountPath": "/host/var/log/aws-routed-eni"},
                                           {"name": "run-dir", "mountPath": "/var/run/aws-node"},
                                           {"name": "xtables-lock", "mountPath": "/run/xtables.lock"}]),
                         ctr("aws-eks-nodeagent", f"{ECR}/amazon/aws-network-policy-agent:v1.4.2",
                             args=["--enable-ipv6=false", "--enable-network-policy=false", "--enable-cloudwatch-logs=false",
                                   "--enable-policy-event-logs=false", "--log-file=/var/log/aws-routed-eni/network-policy-agent.log",
                                   "--metrics-bind-addr=:8162", "--health-probe-bind-addr=:8163"],
                             env=[{"name": "MY_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                             ports=[{"containerPort": 8162, "hostPort": 8162, "name": "agentmetrics", "protocol": "TCP"}],
                             resources={"requests": {"cpu": "25m"}},
                             securityContext={"capabilities": {"add": ["NET_ADMIN"]}, "privileged": True},
                             volumeMounts=[{"name": "cni-bin-dir", "mountPath": "/host/opt/cni/bin"},
                                           {"name": "bpf-pin-path", "mountPath": "/sys/fs/bpf"},
                                           {"name": "log-dir", "mountPath": "/var/log/aws-routed-eni"},
                                           {"name": "run-dir", "mountPath": "/var/run/aws-node"}])],
                     "volumes": [hp("bpf-pin-path", "/sys/fs/bpf"), hp("cni-bin-dir", "/opt/cni/bin"), hp("cni-net-dir", "/etc/cni/net.d"),
                                 hp("log-dir", "/var/log/aws-routed-eni", "DirectoryOrCreate"),
                                 hp("run-dir", "/var/run/aws-node", "DirectoryOrCreate"),
                                 hp("xtables-lock", "/run/xtables.lock", "FileOrCreate")]}}
_, aws_node_pods = c.daemonset("aws-node", "kube-system",
                               {"app.kubernetes.io/instance": "aws-vpc-cni", "app.kubernetes.io/name": "aws-node",
                                "app.kubernetes.io/version": "v1.23.1", "k8s-app": "aws-node"},
                               dict(aws_node, selectorKeys=["k8s-app"]), nodes, host_network=True,
                               update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}})

kp = {"metadata": {"labels": {"k8s-app": "kube-proxy"}},
      "spec": {"priorityClassName": "system-node-critical", "serviceAccountName": "kube-proxy", "hostNetwork": True,
               "tolerations": [{"operator": "Exists"}], "affinity": NOT_FARGATE,
               "containers": [ctr("kube-proxy", f"{ECR}/eks/kube-proxy:v1.35.6-eksbuild.2",
                                  command=["kube-proxy", "--v=2", "--config=/var/lib/kube-proxy-config/config",
                                           "--hostname-override=$(NODE_NAME)"],
                                  env=[{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                                  resources={"requests": {"cpu": "100m"}}, securityContext={"privileged": True},
                                  volumeMounts=[{"name": "varlog", "mountPath": "/var/log"},
                                                {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
                                                {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True},
                                                {"name": "kubeconfig", "mountPath": "/var/lib/kube-proxy/"},
                                                {"name": "config", "mountPath": "/var/lib/kube-proxy-config/"}])],
               "volumes": [hp("varlog", "/var/log"), hp("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
                           hp("lib-modules", "/lib/modules"),
                           {"name": "kubeconfig", "configMap": {"name": "kube-proxy", "defaultMode": 420}},
                           {"name": "config", "configMap": {"name": "kube-proxy-config", "defaultMode": 420}}]}}
c.daemonset("kube-proxy", "kube-system", {"eks.amazonaws.com/component": "kube-proxy", "k8s-app": "kube-proxy"}, kp, nodes,
            host_network=True, update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}})

# eks-pod-identity-agent as its chart's values give it: pullPolicy Always,
# tolerates everything, host network (it serves the link-local endpoint).
pia = {"metadata": {"labels": {"app.kubernetes.io/instance": "eks-pod-identity-agent", "app.kubernetes.io/name": "eks-pod-identity-agent"},
                    "annotations": {"prometheus.io/port": "2705", "prometheus.io/scrape": "true"}},
       "spec": {"priorityClassName": "system-node-critical", "hostNetwork": True, "tolerations": [{"operator": "Exists"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                                          {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                                          {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["fargate"]}]}]}}},
                "initContainers": [ctr("eks-pod-identity-agent-init", f"{ECR}/eks/eks-pod-identity-agent:0.1.10",
                                       imagePullPolicy="Always",
                                       command=["/go-runner", "/eks-pod-identity-agent", "initialize"],
                                       securityContext={"privileged": True})],
                "containers": [ctr("eks-pod-identity-agent", f"{ECR}/eks/eks-pod-identity-agent:0.1.10",
                                   imagePullPolicy="Always",
                                   command=["/go-runner", "/eks-pod-identity-agent", "server"],
                                   args=["--port", "80", "--cluster-name", "prod", "--probe-port", "2703"],
                                   env=[{"name": "AWS_REGION", "value": "us-west-2"}],
                                   ports=[{"containerPort": 80, "hostPort": 80, "name": "proxy", "protocol": "TCP"},
                                          {"containerPort": 2703, "hostPort": 2703, "name": "probes-port", "protocol": "TCP"},
                                          {"containerPort": 2705, "hostPort": 2705, "name": "metrics", "protocol": "TCP"}],
                                   livenessProbe={"httpGet": {"host": "localhost", "path": "/healthz", "port": "probes-port", "scheme": "HTTP"}},
                                   readinessProbe={"httpGet": {"host": "localhost", "path": "/readyz", "port": "probes-port", "scheme": "HTTP"}},
                                   securityContext={"capabilities": {"add": ["CAP_NET_BIND_SERVICE"]}})]}}
c.daemonset("eks-pod-identity-agent", "kube-system",
            {"app.kubernetes.io/instance": "eks-pod-identity-agent", "app.kubernetes.io/name": "eks-pod-identity-agent",
             "app.kubernetes.io/version": "0.1.10"}, pia, nodes, host_network=True,
            update={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}})

dns = {"metadata": {"labels": {"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}},
       "spec": {"priorityClassName": "system-cluster-critical", "serviceAccountName": "coredns", "dnsPolicy": "Default",
                "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                                          {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}]}]}},
                             "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                                 "labelSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
                                 "topologyKey": "kubernetes.io/hostname"}}]}},
                "containers": [ctr("coredns", f"{ECR}/eks/coredns:v1.14.3-eksbuild.1", args=["-conf", "/etc/coredns/Corefile"],
                                   ports=[{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                          {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                          {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}],
                                   resources={"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                                   livenessProbe={"httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 60},
                                   readinessProbe={"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}},
                                   securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                                    "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}},
                                   volumeMounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}])],
                "volumes": [{"name": "config-volume", "configMap": {"name": "coredns", "defaultMode": 420,
                                                                     "items": [{"key": "Corefile", "path": "Corefile"}]}}]}}
_, dns_pods = c.deployment("coredns", "kube-system", {"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns",
                                                      "kubernetes.io/name": "CoreDNS"}, dns, 2, nodes,
                           strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}})
c.service("kube-dns", "kube-system", {"k8s-app": "kube-dns"},
          [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
           {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
           {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}],
          "10.100.0.10", labels={"eks.amazonaws.com/component": "kube-dns", "k8s-app": "kube-dns",
                                 "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}, pods=dns_pods)
c.pdb("coredns", "kube-system", {"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}, dns_pods,
      max_unavailable=1, labels={"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"})

# Webhooks whose backends EKS runs in its control plane: pod-identity-webhook
# and the VPC resource controller's. failurePolicy Ignore throughout (the
# controller's manifests; audit logs show both failing open).
CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
c.webhook_config("Mutating", "pod-identity-webhook", [{
    "name": "iam-for-pods.amazonaws.com", "admissionReviewVersions": ["v1beta1"],
    "clientConfig": {"url": "https://pod-identity-webhook.eks-control-plane.invalid/mutate", "caBundle": CA},
    "failurePolicy": "Ignore", "matchPolicy": "Equivalent", "reinvocationPolicy": "IfNeeded",
    "namespaceSelector": {}, "objectSelector": {"matchExpressions": [
        {"key": "eks.amazonaws.com/skip-pod-identity-webhook", "operator": "DoesNotExist"}]},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 10}])
c.webhook_config("Mutating", "vpc-resource-mutating-webhook", [{
    "name": "mpod.vpc.k8s.aws", "admissionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://vpc-resource-controller.eks-control-plane.invalid/mutate-v1-pod", "caBundle": CA},
    "failurePolicy": "Ignore", "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
    "namespaceSelector": {}, "objectSelector": {},
    "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"], "scope": "*"}],
    "sideEffects": "None", "timeoutSeconds": 10}])
c.webhook_config("Validating", "vpc-resource-validating-webhook", [
    {"name": "vpod.vpc.k8s.aws", "admissionReviewVersions": ["v1"],
     "clientConfig": {"url": "https://vpc-resource-controller.eks-control-plane.invalid/validate-v1-pod", "caBundle": CA},
     "failurePolicy": "Ignore", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
     "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"], "scope": "*"}],
     "sideEffects": "None", "timeoutSeconds": 10},
    {"name": "vnode.vpc.k8s.aws", "admissionReviewVersions": ["v1"],
     "clientConfig": {"url": "https://vpc-resource-controller.eks-control-plane.invalid/validate-v1-node", "caBundle": CA},
     "failurePolicy": "Ignore", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
     "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["nodes"], "scope": "*"}],
     "sideEffects": "None", "timeoutSeconds": 10}])

# A CoreDNS pod scheduled before aws-node on its node was ready: the CNI
# plugin could not reach ipamd's socket yet; the next sandbox attempt
# worked and the pod runs. aws-node's readiness probe failed the same way.
sandbox = dns_pods[1]
c.event(sandbox, "FailedCreatePodSandBox",
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox '
        f'"{hexid(64, "eks", "sandbox")}": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: Error received from '
        'AddNetwork gRPC call: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: '
        'dial unix /var/run/aws-node/ipamd.sock: connect: no such file or directory"',
        1, "2026-11-23T14:33:41Z", "2026-11-23T14:33:41Z", "kubelet", sandbox["spec"]["nodeName"])
c.event(aws_node_pods[2], "Unhealthy",
        'Readiness probe failed: timeout: failed to connect service "unix:///var/run/aws-node/ipamd.sock" within 5s',
        2, "2026-11-23T14:33:38Z", "2026-11-23T14:33:40Z", "kubelet", aws_node_pods[2]["spec"]["nodeName"])

api = BUILTIN_API_RESOURCES + """eniconfigs.crd.k8s.amazonaws.com
policyendpoints.networking.k8s.aws
cninodes.vpcresources.k8s.aws
securitygrouppolicies.vpcresources.k8s.aws""".split("\n")
# EKS creates the gp2 class on the in-tree kubernetes.io/aws-ebs
# provisioner; the EBS CSI driver is an add-on a fresh cluster lacks
# (docs.aws.amazon.com/eks/latest/userguide/ebs-csi-migration-faq.html). Its
# default-class annotation is left out: which versions still set it was
# not checked.
c.storageclass("gp2", "kubernetes.io/aws-ebs", params={"fsType": "ext4", "type": "gp2"})

# The kube-proxy add-on's configuration, mounted at /var/lib/kube-proxy-config
# (aws/containers-roadmap#143); iptables is its default mode, IPVS an opt-in
# (aws/containers-roadmap#142). Only the fields kubegap reads are written.
c.configmap("kube-system", "kube-proxy-config", {"config": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                                                         "kind: KubeProxyConfiguration\nmode: \"iptables\"\n"})

c.write(sys.argv[1], api, version_doc("v1.35.6-eks-3a1f9c2", hexid(40, "eks", "commit"), "2026-07-05T00:00:00Z", "go1.25.10"))
