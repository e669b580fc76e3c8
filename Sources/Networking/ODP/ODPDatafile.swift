import Foundation
import SegmentsDomain

/// What an Optimizely-style datafile says about ODP: the candidate segments and the integration.
///
/// ```swift
/// let candidates = try ODPDatafile.candidateSegments(from: datafileData)   // ["seg-1", "seg-2"]
/// let odp = try ODPDatafile.configuration(from: datafileData)             // from "integrations"
/// ```
public enum ODPDatafile {
    /// Every segment name that a `typedAudiences` condition tests with `"match": "qualified"`, at
    /// any depth of the condition tree, de-duplicated and sorted.
    ///
    /// A condition tree may also be given as a JSON string (as the legacy `audiences` list writes
    /// it); it is parsed. A datafile without `typedAudiences` has no candidates (`[]`).
    /// - Throws: ``SegmentsError`` `.invalidResponse` when `data` is not a JSON object.
    public static func candidateSegments(from data: Data) throws -> [String] {
        candidateSegments(in: try root(of: data))
    }

    /// ``candidateSegments(from:)`` over an already parsed datafile.
    public static func candidateSegments(in datafile: JSONValue) -> [String] {
        guard case .array(let audiences)? = object(datafile)?["typedAudiences"] else { return [] }
        var found = Set<String>()
        // An explicit stack rather than recursion: a hostile datafile cannot exhaust the call stack.
        var stack = audiences.compactMap { object($0)?["conditions"] }
        while let value = stack.popLast() {
            switch value {
            case .array(let items):
                stack.append(contentsOf: items)
            case .object(let fields):
                if case .string(let match)? = fields["match"], match == "qualified", case .string(let name)? = fields["value"] {
                    found.insert(name)
                }
                stack.append(contentsOf: fields.values)
            case .string(let text):
                let data = Data(text.utf8)
                // A string may hold U+0000, so its UTF-8 can be a UTF-16 text: checked as a body is.
                if JSONText.refusal(of: data) == nil, let nested = try? JSONDecoder().decode(JSONValue.self, from: data),
                    isContainer(nested)
                {
                    stack.append(nested)
                }
            default:
                break
            }
        }
        return found.sorted()
    }

    /// The ODP integration of the datafile (`"integrations": [{"key": "odp", "publicKey": …, "host": …}]`),
    /// or `nil` when it has none with a public key.
    /// - Throws: ``SegmentsError`` `.invalidResponse` when `data` is not a JSON object.
    public static func configuration(from data: Data) throws -> ODPConfiguration? {
        guard case .array(let integrations)? = object(try root(of: data))?["integrations"] else { return nil }
        for integration in integrations {
            guard let fields = object(integration), case .string("odp")? = fields["key"],
                case .string(let key)? = fields["publicKey"], !key.isEmpty
            else { continue }
            if case .string(let host)? = fields["host"], !host.isEmpty {
                return ODPConfiguration(apiKey: key, apiHost: host)
            }
            return ODPConfiguration(apiKey: key)
        }
        return nil
    }

    private static func root(of data: Data) throws -> JSONValue {
        // Before any parsing: a deeply nested datafile could overflow a thread's stack, and one in
        // UTF-16 or UTF-32 would hide its depth from the scan (Foundation's decoders convert it).
        if let refusal = JSONText.refusal(of: data) {
            throw SegmentsError(.invalidResponse, "The datafile \(refusal)")
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw SegmentsError(.invalidResponse, "The datafile is not JSON", underlying: error)
        }
        guard case .object = value else { throw SegmentsError(.invalidResponse, "The datafile is not a JSON object") }
        return value
    }

    private static func object(_ value: JSONValue) -> [String: JSONValue]? {
        if case .object(let fields) = value { return fields }
        return nil
    }

    private static func isContainer(_ value: JSONValue) -> Bool {
        switch value {
        case .array, .object: true
        default: false
        }
    }
}
