// Package packgen writes a pack of scenarios in seed 001's shape for the
// consequential tools of a reviewed catalogue (`callproof init
// --catalogue`): corrections of the key and of a value at each stage,
// interruptions (a stop during the write, a withdrawal, a value replaced
// mid-sentence, a barge-in that only agrees, noises that must not barge
// in) and tool failures (every mock backend fault kind that makes a
// write's outcome uncertain), each with records synthesized from the
// arguments' types, patterns and enums, caller lines that say the values
// in spoken forms (package spoken), and the expected axes.
//
// A pack is a function of the catalogue and the injected random source:
// the same seed writes the same bytes. Every scenario it writes loads and
// validates (Generate checks each one); an argument no value can be
// synthesized for is refused, naming the tool and the argument.
package packgen
