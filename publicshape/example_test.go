package publicshape_test

import (
	"fmt"
	"time"

	"github.com/dealer-edge/dealer-edge/publicshape"
)

func ExamplePreview() {
	body := "Il Ducato   Maxi è pronto:\n\tgaranzia di 24 mesi e tagliando incluso."
	fmt.Println(publicshape.Preview(body, 30))
	fmt.Println(publicshape.Preview("Breve  testo", 30))
	// Output:
	// Il Ducato Maxi è pronto:…
	// Breve testo
}

func ExampleCanonicalSlug() {
	fmt.Println(publicshape.CanonicalSlug("Cella Frigorifera (ATP) – Più Grande"))
	fmt.Println(publicshape.ValidSlug("cella-frigorifera"), publicshape.ValidSlug("Cella--Frigo"))
	// Output:
	// cella-frigorifera-atp-piu-grande
	// true false
}

func ExampleUpfits() {
	ups, primary := publicshape.Upfits([]publicshape.UpfitSource{
		{Code: "G1", Label: "Gru idraulica", Family: "sollevamento"},
		{Code: "Z9", Label: "Altro", DealerAlias: "Allestimento Rossi", Family: "altro", Primary: true},
	})
	for _, u := range ups {
		fmt.Printf("%s %s %q %q primary=%v\n", u.Code, u.Slug, u.Label, u.DisplayLabel, u.IsPrimary)
	}
	fmt.Println("primary:", primary.Code)
	// Output:
	// G1 gru-idraulica "Gru idraulica" "Gru idraulica" primary=false
	// Z9 altro "Altro" "Allestimento Rossi" primary=true
	// primary: Z9
}

func ExampleDeprecationPolicy_Headers() {
	p := publicshape.DeprecationPolicy{
		Deprecation:  time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Sunset:       time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC),
		SuccessorURL: "https://editorial.example/",
	}
	dep, sunset, link := p.Headers()
	fmt.Println("Deprecation:", dep)
	fmt.Println("Sunset:", sunset)
	fmt.Println("Link:", link)
	// Output:
	// Deprecation: @1735689600
	// Sunset: Thu, 31 Dec 2026 23:59:59 GMT
	// Link: <https://editorial.example/>; rel="successor-version", <https://editorial.example/>; rel="sunset"
}

func ExampleProblemFor() {
	status, title, _ := publicshape.ProblemFor("invalid_service")
	fmt.Println(status, title, publicshape.ProblemTypeURI("https://docs.example/problems/", "invalid_service"))
	// Output:
	// 400 Invalid service https://docs.example/problems/invalid_service
}
