// Package rtcpeer builds the pion WebRTC API that both ends of a callproof
// WebRTC call use: PCMU/8000 as the only audio codec (payload type 0, no
// cgo, the Twilio dialect's μ-law), host candidates over UDP with loopback
// included (pion leaves loopback out by default, and a harness and an
// agent on one machine meet only there), no mDNS, and the default
// interceptors (RTCP reports and NACK).
package rtcpeer
