package metricnames

import "testing"

// EdgeTLSCertificateExpiresSoon warns for an instance whose served
// certificate expires within 14 days, for an hour, and not for one with a
// later expiry. A certificate that expires makes every client's handshake
// fail before a request is counted: no SLO alert sees it. Until 2026-11-27
// edge_tls_certificate_not_after_seconds was exported and no rule read it,
// so a renewal that was not written, or did not load (the edge keeps the
// pair in force), went unnoticed until clients failed.
func TestTLSCertificateExpiryAlert(t *testing.T) {
	promtoolTest(t, `rule_files:
  - RULES
evaluation_interval: 30s
tests:
  - name: one certificate expires in 10 days, the other in 60
    interval: 1m
    input_series:
      - series: 'edge_tls_certificate_not_after_seconds{job="dealer-edge",instance="a:9091"}'
        values: '871200x150'
      - series: 'edge_tls_certificate_not_after_seconds{job="dealer-edge",instance="b:9091"}'
        values: '5184000x150'
    alert_rule_test:
      - eval_time: 50m
        alertname: EdgeTLSCertificateExpiresSoon
        exp_alerts: []
      - eval_time: 2h
        alertname: EdgeTLSCertificateExpiresSoon
        exp_alerts:
          - exp_labels: {severity: warning, job: dealer-edge, instance: "a:9091"}
            exp_annotations:
              summary: "TLS certificate of a:9091 expires in 10d 0h 0m 0s"
              description: "The certificate the public listener of a:9091 serves expires within 14 days and no renewed one is in force. At expiry every client's TLS handshake fails, which no SLO alert sees."
              runbook_url: https://github.com/dealer-edge/dealer-edge/blob/main/docs/runbook.md#edgetlscertificateexpiressoon
`)
}
