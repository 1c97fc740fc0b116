// Package reports turns call scores into what people read: a suite summary
// accumulated call by call (Summary), rendered as the terminal table, as
// JSON, side by side for several agents, and one call's timeline with the
// reasons behind each axis. Accumulating and rendering are separate, so a
// run can stream scores in and render once at the end.
package reports
