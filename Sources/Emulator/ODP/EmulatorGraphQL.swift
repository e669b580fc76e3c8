import Foundation

/// The emulator's `POST /v3/graphql`: the ODP audiences query ("ODP audiences query" in the wire
/// format of `Docs/Behaviour.md`).
///
/// Order of decisions: `x-api-key` (401) → body is a JSON object with a `query` string (400) →
/// the query has the documented shape with a known identifier field and `variables.userId` is a
/// string (else HTTP 200 with a `ValidationError`, as a GraphQL server answers) → unknown user
/// (per ``EmulatorUnknownUserAnswer``) → the audiences of `variables.audiences` (or every known
/// audience when absent), in that order, each `qualified` or `not_qualified`.
enum EmulatorGraphQL {
    /// The identifier fields ODP knows.
    static let identifierFields: Set<String> = ["vuid", "fs_user_id"]

    static func answer(_ request: ParsedHTTPRequest, state: EmulatorState) -> EmulatorHTTPResponse {
        if let keys = state.odp.apiKeys {
            guard let key = request.header("x-api-key"), keys.contains(key) else {
                return .json(401, object: ["message": "missing or unknown x-api-key"])
            }
        }
        guard let body = try? EmulatorJSON(jsonData: Data(request.body)), case .string(let query)? = body["query"] else {
            return .error(400, "body must be {\"query\": \"…\", \"variables\": {…}}")
        }
        guard let field = identifierField(in: query), identifierFields.contains(field) else {
            return validationError("the query must read customer(vuid|fs_user_id: $userId)")
        }
        guard hasAudiencesSelection(query) else {
            return validationError("the query must select audiences(subset: $audiences) {edges {node {name state}}}")
        }
        guard case .string(let userId)? = body["variables"]?["userId"], !userId.isEmpty else {
            return validationError("variables.userId must be a non-empty string")
        }
        var subset: [String]?
        switch body["variables"]?["audiences"] {
        case nil, .null?:
            break
        case .array(let items)?:
            subset = items.compactMap { if case .string(let name) = $0 { name } else { nil } }
            guard subset?.count == items.count else { return validationError("variables.audiences must be strings") }
        default:
            return validationError("variables.audiences must be an array of strings")
        }
        guard let qualified = state.qualifiedAudiences(forUser: userId) else {
            return unknownUser(state.odp.unknownUser)
        }
        let edges = (subset ?? state.odp.knownAudiences).map { name -> EmulatorJSON in
            ["node": ["name": .string(name), "state": qualified.contains(name) ? "qualified" : "not_qualified"]]
        }
        return .json(200, object: ["data": ["customer": ["audiences": ["edges": .array(edges)]]]])
    }

    /// The name in `customer(<name>: $userId)`, or `nil` when the query does not read so.
    static func identifierField(in query: String) -> String? {
        guard let open = query.range(of: "customer(") else { return nil }
        let rest = query[open.upperBound...]
        guard let colon = rest.firstIndex(of: ":") else { return nil }
        let name = rest[..<colon].trimmingCharacters(in: .whitespaces)
        let argument = rest[rest.index(after: colon)...].drop { $0 == " " }
        guard argument.hasPrefix("$userId"), argument.dropFirst("$userId".count).drop(while: { $0 == " " }).first == ")"
        else { return nil }
        return name
    }

    private static func hasAudiencesSelection(_ query: String) -> Bool {
        let compact = String(query.filter { !$0.isWhitespace })
        return compact.contains("audiences(subset:$audiences){edges{node{namestate}}}")
    }

    private static func validationError(_ message: String) -> EmulatorHTTPResponse {
        .json(200, object: ["errors": [["message": .string(message), "extensions": ["classification": "ValidationError"]]]])
    }

    private static func unknownUser(_ answer: EmulatorUnknownUserAnswer) -> EmulatorHTTPResponse {
        let message: EmulatorJSON = "Exception while fetching data (/customer) : Exception: could not resolve _fs_user_id"
        switch answer {
        case .invalidIdentifier:
            return .json(200, object: [
                "errors": [["message": message, "path": ["customer"],
                            "extensions": ["code": "INVALID_IDENTIFIER_EXCEPTION", "classification": "DataFetchingException"]]],
                "data": ["customer": nil],
            ])
        case .legacyInvalidIdentifier:
            return .json(200, object: [
                "errors": [["message": message, "path": ["customer"],
                            "extensions": ["classification": "InvalidIdentifierException"]]],
                "data": ["customer": nil],
            ])
        case .nullCustomer:
            return .json(200, object: ["data": ["customer": nil]])
        }
    }
}
