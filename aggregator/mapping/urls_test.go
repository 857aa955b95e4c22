package mapping

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/check"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// validateDetail encodes a vehicle detail as the edge does (json.Marshal
// of the envelope) and validates it against the served OpenAPI document.
func validateDetail(t *testing.T, d publicshape.VehicleDetail) error {
	t.Helper()
	c, err := check.Public()
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(publicshape.InventoryDetail{Service: publicshape.ServiceRewind, Vehicle: &d})
	if err != nil {
		t.Fatal(err)
	}
	return c.Validate("/dealer/REWIND/details", 200, "application/json", body)
}

// TestVehicleMediaDurationNotNegative: the media service's podcast
// or video duration_seconds was published as it came (until 2026-11-29); below 0 the detail
// is outside the OpenAPI document (DealerPublicPodcast/Video
// duration_seconds minimum 0), the rule the content items already keep
// (TestDurationSecondsNotNegative).
func TestVehicleMediaDurationNotNegative(t *testing.T) {
	v := noisyVehicle()
	at := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for name, m := range map[string]*upstream.Media{
		"podcast": {Podcast: &upstream.Podcast{Title: "Ep", AudioURL: "https://cdn.example/a.mp3", DurationSeconds: -1, PublishedAt: at}},
		"video":   {Video: &upstream.Video{Title: "V", VideoURL: "https://cdn.example/v.mp4", DurationSeconds: -30, PublishedAt: at}},
	} {
		if err := validateDetail(t, VehicleDetail(v, noisyEquipment(), m)); err != nil {
			t.Errorf("%s with a negative duration: detail outside the OpenAPI document: %v", name, err)
		}
	}
}

// TestPublishedURLsAreURIs: cover_url, media_urls[] and the content
// item URLs are "format: uri" in the OpenAPI document (contract 2.2, 2.5,
// 2.7), but until 2026-11-29 any string the services sent was published as it was: an empty
// entry of media_urls or a relative cover path puts the answer outside
// the document the edge serves, while the edge does check the other
// formats it publishes (uuid ids, catalog_type's enum, duration minimum).
func TestPublishedURLsAreURIs(t *testing.T) {
	c, err := check.Public()
	if err != nil {
		t.Fatal(err)
	}
	v := noisyVehicle()
	v.CoverURL = "/media/cover.jpg"
	v.MediaURLs = []string{"https://cdn.example/1.jpg", "", "https://cdn.example/2.jpg"}
	if err := validateDetail(t, VehicleDetail(v, noisyEquipment(), nil)); err != nil {
		t.Errorf("vehicle detail: %v", err)
	}
	body, err := AppendVehicleListing(nil, &publicshape.InventoryListing{Service: "REWIND", Page: 1, PageSize: 20, Total: 1}, []upstream.Vehicle{v})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate("/dealer/REWIND/listing", 200, "application/json", body); err != nil {
		t.Errorf("vehicle listing: %v", err)
	}
	r := upstream.ContentRecord{ID: 9, Type: "videos", Slug: "v", Title: "V", BodyText: "x", URL: "/video/v", ThumbnailURL: "thumbs/v.jpg"}
	l := publicshape.ContentListing{ContentType: "videos", Page: 1, PageSize: 20, Total: 1, Items: []publicshape.ContentItem{ContentItem(r, "videos", ListingForm)}}
	body, _ = json.Marshal(l)
	if err := c.Validate("/dealer/content/videos/listing", 200, "application/json", body); err != nil {
		t.Errorf("content listing: %v", err)
	}
}
