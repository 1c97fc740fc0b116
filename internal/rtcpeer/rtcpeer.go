package rtcpeer

import (
	"fmt"
	"net"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// Options shape the API.
type Options struct {
	// LoopbackOnly keeps every candidate on a loopback address: tests and
	// load runs must never send to another host.
	LoopbackOnly bool
}

// PCMU is the one audio codec offered and accepted.
var PCMU = webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1}

// PCMUPayloadType is PCMU's static RTP payload type.
const PCMUPayloadType = 0

// NewAPI returns a pion API set up as the package comment says.
func NewAPI(o Options) (*webrtc.API, error) {
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: PCMU, PayloadType: PCMUPayloadType}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("rtcpeer: PCMU: %w", err)
	}
	ir := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(m, ir); err != nil {
		return nil, fmt.Errorf("rtcpeer: interceptors: %w", err)
	}
	se := webrtc.SettingEngine{}
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	if o.LoopbackOnly {
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	}
	return webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(ir), webrtc.WithSettingEngine(se)), nil
}

// HasPCMU says whether an SDP's audio section offers or accepts PCMU.
func HasPCMU(d *webrtc.SessionDescription) bool {
	sd, err := d.Unmarshal()
	if err != nil {
		return false
	}
	for _, md := range sd.MediaDescriptions {
		if md.MediaName.Media != "audio" {
			continue
		}
		for _, f := range md.MediaName.Formats {
			if f == "0" {
				return true
			}
		}
	}
	return false
}
