// Adds to the RealtimeSegments symbol graph the members that SegmentsDomain declares in
// extensions of the types RealtimeSegments re-exports one by one (`@_exported import struct
// SegmentsDomain.SegmentsError`, …). The compiler's graph of the facade lists those types and the
// members of their primary declarations only, so without this step the documentation would lack,
// for example, `SegmentsError.reason` and `JSONValue`'s literal initializers.
//
//   swift Scripts/merge-reexported-members.swift <facade graph> <SegmentsDomain graph>
//
// The facade graph is rewritten in place. Run by Scripts/build-docs.sh.
import Foundation

typealias Object = [String: Any]

func load(_ path: String) throws -> Object {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    guard let object = try JSONSerialization.jsonObject(with: data) as? Object else {
        throw CocoaError(.fileReadCorruptFile)
    }
    return object
}

func identifier(_ symbol: Object) -> String? {
    (symbol["identifier"] as? Object)?["precise"] as? String
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: merge-reexported-members <facade graph> <domain graph>\n".utf8))
    exit(2)
}
var facade = try load(arguments[1])
let domain = try load(arguments[2])
var symbols = facade["symbols"] as? [Object] ?? []
var relationships = facade["relationships"] as? [Object] ?? []
let present = Set(symbols.compactMap(identifier))
// The types the facade re-exports: their top-level names as listed in its graph.
let exportedTypes = Set(symbols.compactMap { ($0["pathComponents"] as? [String])?.count == 1 ? ($0["pathComponents"] as? [String])?.first : nil })

var added = Set<String>()
for symbol in domain["symbols"] as? [Object] ?? [] {
    guard let id = identifier(symbol), !present.contains(id), symbol["accessLevel"] as? String == "public",
        let path = symbol["pathComponents"] as? [String], path.count > 1, exportedTypes.contains(path[0])
    else { continue }
    symbols.append(symbol)
    added.insert(id)
}
for relationship in domain["relationships"] as? [Object] ?? [] {
    guard let source = relationship["source"] as? String, added.contains(source) else { continue }
    relationships.append(relationship)
}
facade["symbols"] = symbols
facade["relationships"] = relationships
let data = try JSONSerialization.data(withJSONObject: facade)
try data.write(to: URL(fileURLWithPath: arguments[1]))
print("Symbol graph: \(added.count) members of re-exported Domain types added")
