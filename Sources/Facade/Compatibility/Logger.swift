import Foundation
import SegmentsDomain
import SegmentsData

/// The log of the facade: the Exponea SDK's `Logger`, an open class an app subclasses or
/// configures (<doc:Behaviour#L2>, <doc:Behaviour#L3>, <doc:Behaviour#X1>).
///
/// ``Exponea/logger`` is one, assignable as in the Exponea SDK:
///
/// ```swift
/// final class AppLogger: Logger {
///     override func log(_ level: LogLevel, message: String, fileName: String, line: Int, funcName: String) -> Bool {
///         guard super.log(level, message: message, fileName: fileName, line: line, funcName: funcName) else { return false }
///         crashReporter.breadcrumb(message)
///         return true
///     }
/// }
/// Exponea.logger = AppLogger()
/// Exponea.logger.logLevel = .verbose
/// ```
///
/// Every line of the shared instance goes to the logger assigned at the time it is logged. The
/// default ``log(_:message:fileName:line:funcName:)`` drops lines above ``logLevel`` and hands the
/// rest to ``logMessage(_:)``, which runs the log hooks and writes the line to ``sink``: by default
/// Apple's unified logging system (customer ids and server text private) on Apple platforms,
/// standard output on Linux. The line is the SDK's text as it is (it starts `Segments:` or
/// `Tracking:`, <doc:Behaviour#L1>), not the Exponea SDK's date, file and function prefix.
///
/// The SDK calls it from its own threads, never while holding a lock; a subclass's overrides must
/// be safe to call from any thread. Its own state is guarded by a lock. It is not declared
/// `Sendable`, as the Exponea SDK's is not: a `Sendable` class would make every app subclass
/// restate the conformance (a warning in the app), and the SDK only reaches it through
/// ``Exponea/logger``.
open class Logger {

    /// The level of the line being handed to ``logMessage(_:)`` by the default
    /// ``log(_:message:fileName:line:funcName:)``; `.verbose` outside it.
    @TaskLocal private static var lineLevel: LogLevel = .verbose

    private let lock = NSLock()
    private var level: LogLevel = .warning
    private var destination: any SegmentsLogger = SinkSegmentsLogger.defaultSink
    private var hooks: [(id: String, hook: (String) -> Void)] = []

    /// Formats dates for subclasses that stamp their lines (`yyyy-MM-dd hh:mm:ssSSS`); the default
    /// lines carry no date (the unified logging system stamps its own).
    public let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd hh:mm:ssSSS"
        formatter.locale = Locale.current
        formatter.timeZone = TimeZone.current
        return formatter
    }()

    /// A logger at level `.warning` writing to the platform's log.
    public required init() {}

    /// The most detailed level written: `.none`, `.error`, `.warning` (default) or `.verbose`.
    /// Settable before configure and at any time; the SDK reads it for every line, and logs
    /// customer ids only at `.verbose` (<doc:Behaviour#P4>).
    open var logLevel: LogLevel {
        get { locked { level } }
        set { locked { level = newValue } }
    }

    /// Where ``logMessage(_:)`` writes a line it is given, with the line's level: the platform's log
    /// by default (``SinkSegmentsLogger/defaultSink``). Any ``SegmentsLogger`` works; it filters
    /// by its own `logLevel` too.
    public var sink: any SegmentsLogger {
        get { locked { destination } }
        set {
            // The replaced sink is released after the lock: its deinit may log.
            let replaced = locked { () -> any SegmentsLogger in
                defer { destination = newValue }
                return destination
            }
            withExtendedLifetime(replaced) {}
        }
    }

    /// Logs `message` at `level` when ``logLevel`` lets it through, through ``logMessage(_:)``.
    ///
    /// - Parameters:
    ///   - level: the line's severity; `.none` is never written.
    ///   - message: the line.
    ///   - fileName: the file the line comes from (the SDK's own file for its lines).
    ///   - line: the line number in that file.
    ///   - funcName: the function the line comes from.
    /// - Returns: whether the line was written.
    @discardableResult
    open func log(
        _ level: LogLevel, message: String, fileName: String = #file, line: Int = #line, funcName: String = #function
    ) -> Bool {
        guard level != .none, level <= logLevel else { return false }
        Self.$lineLevel.withValue(level) { logMessage(message) }
        return true
    }

    /// Writes a line that passed ``logLevel``: runs the log hooks with it, then hands it to
    /// ``sink`` at the line's level. Override it to send lines elsewhere.
    open func logMessage(_ message: String) {
        let (hooks, sink) = locked { (self.hooks.map(\.hook), destination) }
        for hook in hooks { hook(message) }
        sink.log(Self.lineLevel, message)
    }

    /// Adds a closure called with every line ``logMessage(_:)`` writes.
    /// - Returns: the id that removes it (``removeLogHook(with:)``).
    public func addLogHook(_ hook: @escaping (String) -> Void) -> String {
        let id = UUID().uuidString
        locked { hooks.append((id, hook)) }
        return id
    }

    /// Removes the log hook `id`; an unknown id changes nothing.
    public func removeLogHook(with id: String) {
        let removed = locked { () -> [(id: String, hook: (String) -> Void)] in
            let removed = hooks.filter { $0.id == id }
            hooks.removeAll { $0.id == id }
            return removed
        }
        // The app's closures are released after the lock.
        withExtendedLifetime(removed) {}
    }

    /// Runs `body` holding the lock (`NSLock.withLock` is newer than the platform floor).
    private func locked<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// The last component of `filePath`.
    public func sourceFile(from filePath: String) -> String {
        filePath.split(separator: "/").last.map(String.init) ?? filePath
    }

}

extension LogLevel {
    /// The level's name in capitals (`NONE`, `ERROR`, `WARNING`, `VERBOSE`), as the Exponea SDK's
    /// `LogLevel.name`.
    public var name: String { description.uppercased() }
}

extension Exponea {
    /// The log of ``shared`` (and of the facade's own lines): the Exponea SDK's assignable logger
    /// (<doc:Behaviour#L2>, <doc:Behaviour#L3>, <doc:Behaviour#X1>).
    ///
    /// Set its level (`Exponea.logger.logLevel = .verbose`), its ``Logger/sink``, or assign an
    /// instance of a ``Logger`` subclass, at any time: every line goes to the logger assigned when
    /// it is logged, at its level then. Instances built with ``init(client:)`` log through their
    /// client's ``SegmentsRuntime/logger`` instead.
    public static var logger: Logger {
        get { currentLogger.logger }
        set { currentLogger.logger = newValue }
    }

    /// The logger ``logger`` answers.
    private static let currentLogger = LoggerSlot()

    /// What ``shared`` and its settings log through: whatever ``logger`` is when a line is logged.
    package static let loggerOfShared: any SegmentsLogger = CurrentExponeaLogger()
}

/// Hands each line to the ``Exponea/logger`` of the moment.
private struct CurrentExponeaLogger: SegmentsLogger {
    var logLevel: LogLevel { Exponea.logger.logLevel }

    func log(_ level: LogLevel, _ message: String) {
        Exponea.logger.log(level, message: message)
    }
}

/// Holds ``Exponea/logger`` behind a lock.
private final class LoggerSlot: @unchecked Sendable {
    // `@unchecked`: `current` is only read and written under `lock`.
    private let lock = NSLock()
    private var current = Logger()

    var logger: Logger {
        get {
            lock.lock()
            defer { lock.unlock() }
            return current
        }
        set {
            lock.lock()
            let replaced = current
            current = newValue
            lock.unlock()
            // The replaced logger is the app's object: released after the lock (its deinit may log).
            withExtendedLifetime(replaced) {}
        }
    }
}
