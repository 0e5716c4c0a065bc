{{/* The name of every object: the release name, with the chart's name when the release name lacks it. */}}
{{- define "kubegap.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kubegap.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubegap.labels" -}}
{{ include "kubegap.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kubegap.auditServiceAccount" -}}
{{- default (printf "%s-audit" (include "kubegap.fullname" .)) .Values.serviceAccounts.audit.name -}}
{{- end -}}

{{- define "kubegap.publisherServiceAccount" -}}
{{- default (printf "%s-publisher" (include "kubegap.fullname" .)) .Values.serviceAccounts.publisher.name -}}
{{- end -}}

{{- define "kubegap.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The audit's selection flags, shared by the CronJob's audit step. */}}
{{- define "kubegap.auditArgs" -}}
{{- with .Values.audit.checks }}
- --checks={{ join "," . }}
{{- end }}
{{- with .Values.audit.skipChecks }}
- --skip-checks={{ join "," . }}
{{- end }}
- --min-severity={{ .Values.audit.minSeverity }}
{{- with .Values.audit.targetVersion }}
- --target-version={{ . }}
{{- end }}
{{- if .Values.audit.ignoreProviderOwned }}
- --ignore-provider-owned
{{- end }}
{{- range .Values.audit.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The pod settings the CronJob and the exporter share. */}}
{{- define "kubegap.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
{{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
{{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}
