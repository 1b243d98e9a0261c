// Package reqhead assembles the header of one request as a browser profile
// sends it: the profile's default fields for the request's protocol and
// kind, in the browser's order and case, with the caller's fields and
// guise's per-request fields (Host, Cookie, Referer, Sec-Fetch-Site) in
// their places.
//
// Every browser difference it applies is read from the profile's data (the
// header sets and their Redirect, Body, PerRequest, UserActivation and
// NeedsBody marks); the package never looks at which browser a profile is.
// A browser that behaves differently is a new profile file, not new code.
//
// The only rules here are HTTP's and guise's, the same for every profile:
// HTTP/2 lower-cases names and drops the connection-specific fields, a
// POST or PUT without a body carries Content-Length: 0, a request with a
// body carries Origin where its set has a slot for it, and fields without
// a slot in the set go after it.
package reqhead
