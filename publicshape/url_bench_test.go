package publicshape

import "testing"

// BenchmarkPublicURL: the check of one cover URL of the fake's shape, made
// once per listed vehicle on a listing miss.
func BenchmarkPublicURL(b *testing.B) {
	u := "https://cdn.example-dealer-media.it/dealers/101/vehicles/d3b8b8d4-bf88-4ab6-b912-6b61eb3e51ae/cover.jpg"
	n := 0
	for b.Loop() {
		n += len(PublicURL(u))
	}
	_ = n
}
