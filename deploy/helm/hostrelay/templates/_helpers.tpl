{{- define "hostrelay.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hostrelay.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hostrelay.labels" -}}
{{ include "hostrelay.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The relay ports, as a list, once the values are checked. */}}
{{- define "hostrelay.relayPorts" -}}
{{- $min := int .Values.relayPorts.min -}}
{{- $max := int .Values.relayPorts.max -}}
{{- if or (lt $min 1024) (gt $max 65535) (gt $min $max) -}}
{{- fail (printf "relayPorts %d-%d: want 1024 <= min <= max <= 65535" $min $max) -}}
{{- end -}}
{{- toJson (untilStep $min (int (add1 $max)) 1) -}}
{{- end -}}

{{/* Fails on values the chart cannot serve. */}}
{{- define "hostrelay.check" -}}
{{- if not (has .Values.exposure (list "hostPort" "nodePort" "hostNetwork")) -}}
{{- fail (printf "exposure %q: want hostPort, nodePort or hostNetwork" .Values.exposure) -}}
{{- end -}}
{{- if eq .Values.exposure "nodePort" -}}
{{- $lo := int .Values.nodePortRange.min -}}
{{- $hi := int .Values.nodePortRange.max -}}
{{- range $name, $p := dict "turn.port" (int .Values.turn.port) "relayPorts.min" (int .Values.relayPorts.min) "relayPorts.max" (int .Values.relayPorts.max) -}}
{{- if or (lt $p $lo) (gt $p $hi) -}}
{{- fail (printf "exposure nodePort: %s %d is outside the node port range %d-%d; pick ports inside it (TURN hands out the ports it listens on, so the pod listens on the node ports themselves)" $name $p $lo $hi) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
