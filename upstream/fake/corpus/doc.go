// Package corpus generates the editorial data of the fake content service.
//
// The content service contract (see package upstream) returns a dealer's raw
// view of one content type: global records (DealerID 0), the dealer's own
// records, its overrides of global FAQ records and the records it has
// hidden, all of them, unpaginated. The edge applies the public visibility
// rules; this package only produces the raw material, rich enough to
// exercise every rule:
//
//   - faq: global questions (DealerID 0); per dealer, overrides (DealerID =
//     dealer, OverrideOf = the global id, same slug, an answer that names
//     the dealer), global questions hidden for that dealer only
//     (HiddenForDealer differs between dealers' views) and the dealer's own
//     questions, a few of them hidden.
//   - news: per dealer, custom news (Category set) and configured rewrites of
//     global news (Brand set), both with SourceProvider "dealer_editorial";
//     global wire stories (DealerID 0, "global_wire") and the dealer's
//     archived editions ("historical_import"), which the edge keeps readable
//     by slug but out of discovery; a few custom news are hidden.
//   - glossary (Category) and guides (Topic): mostly global, shared by every
//     dealer with the same slug, some hidden per dealer, plus a few dealer
//     items.
//   - videos and podcasts: generated vehicle media of each dealer plus a few
//     global episodes, with MediaURL, DurationSeconds, ThumbnailURL (videos)
//     and Transcript (podcasts).
//
// Every record also carries internal-only noise (TemplateID, SourceID,
// BodyHTML, RenderPayload, SEOPayload) that the edge must never expose.
//
// The data is generated once, lazily, from a fixed seed and fixed dates: the
// output is identical on every run and in every process. Demo dealers are 101
// (Alpha Motori, Milano, www.alphamotori.it), 102 (BetaCar, Roma,
// www.betacar.it) and 103 (Gamma Auto, Torino, www.gammaauto.it), the same
// brands and primary domains as the fake dealers service; record URLs are
// https://<primary domain>/<faq|news|glossario|guide|video|podcast>/<slug>.
// Any other dealer id, such as 199, has no data.
//
// Records and Filter are safe for concurrent use.
package corpus
