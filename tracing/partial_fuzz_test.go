package tracing

import (
	"strings"
	"testing"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// FuzzPartialSuccess: parsePartialSuccess, the reader of a collector's
// 2xx answer, agrees with the protobuf runtime's decoding of
// ExportTraceServiceResponse on every body the runtime accepts (a partial
// success found exactly when the runtime has one, the same rejected
// count, the same message cut at a character boundary), and on any body
// reports a message that is valid UTF-8 of at most maxPartialMessage
// bytes (it goes into a log line and an error).
func FuzzPartialSuccess(f *testing.F) {
	for _, m := range []*coltracepb.ExportTraceServiceResponse{
		{},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "quota"}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: -1}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{ErrorMessage: "x" + strings.Repeat("é", 300)}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("<html>bad gateway</html>"))
	f.Add([]byte("\x0a\x04\x12\x02\xff\x61"))
	f.Add([]byte("\x0a\x02\x08\x01\x0a\x02\x08\x02\x3a\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, found := parsePartialSuccess(b)
		if !utf8.ValidString(got.message) || len(got.message) > maxPartialMessage {
			t.Fatalf("body %q: message of %d bytes %q", b, len(got.message), got.message)
		}
		var want coltracepb.ExportTraceServiceResponse
		if err := proto.Unmarshal(b, &want); err != nil {
			return
		}
		ps := want.GetPartialSuccess()
		if found != (ps != nil) {
			t.Fatalf("body %q: found %v, the protobuf runtime %v", b, found, ps)
		}
		if !found {
			return
		}
		msg := ps.GetErrorMessage()
		if got.rejected != ps.GetRejectedSpans() || !strings.HasPrefix(msg, got.message) ||
			len(got.message) < min(len(msg), maxPartialMessage-utf8.UTFMax+1) {
			t.Fatalf("body %q: got %+v, the protobuf runtime %d %q", b, got, ps.GetRejectedSpans(), msg)
		}
	})
}
