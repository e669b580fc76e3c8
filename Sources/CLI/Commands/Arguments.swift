/// A small parser for `--name value` options and `--flag` switches.
struct Arguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`, accepting only the given option names (without `--`).
    init(_ arguments: [String], options: Set<String>, flags allowedFlags: Set<String> = []) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            // The stray value is not repeated: it may be a key typed in the wrong place, and this
            // message lands in terminals and CI logs (see Behaviour P4). Its position is enough.
            guard argument.hasPrefix("--") else {
                throw UsageError(reason: "unexpected argument at position \(index + 1) after the command (options are --name value; the argument is not shown)")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "help" || allowedFlags.contains(name) {
                flags.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    index += 1
                    guard index < arguments.count else { throw UsageError(reason: "--\(name) needs a value") }
                    values[name] = arguments[index]
                }
            } else {
                throw UsageError(reason: Self.looksLikeAnOptionName(name)
                    ? "unknown option --\(name)" : "unknown option at position \(index + 1) (its name is not shown)")
            }
            index += 1
        }
    }

    /// Whether `name` reads like an option's name (lower-case words joined by `-`), so naming it
    /// in an error cannot repeat a key pasted after `--`.
    private static func looksLikeAnOptionName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 32 && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || $0 == "-" }
    }

    /// Whether `--help` was given.
    var wantsHelp: Bool { flags.contains("help") }

    /// Whether the switch was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of an option, if given.
    func value(_ name: String) -> String? { values[name] }

    /// The value of a required option.
    func required(_ name: String) throws -> String {
        guard let value = values[name], !value.isEmpty else { throw UsageError(reason: "--\(name) is required") }
        return value
    }
}
