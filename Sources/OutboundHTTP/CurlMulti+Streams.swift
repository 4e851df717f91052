import CCurl
import CCurlShims

extension CurlMulti {
    /// `transfer`'s request is about to go out (inside curl): a connection curl opened for it is ready now.
    func connected(_ transfer: CurlTransfer) {
        guard transfer.https, hosts[transfer.origin] != nil else { return }
        let opened = twobits_easy_info_long(transfer.easy, CURLINFO_NUM_CONNECTS) > 0
        hosts[transfer.origin]!.connected(ObjectIdentifier(transfer), socket: twobits_easy_active_socket(transfer.easy), opened: opened)
        admitWaiting = true
    }

    /// `transfer` left curl (done or taken out): its stream is free.
    func ended(_ transfer: CurlTransfer) {
        guard transfer.https, hosts[transfer.origin] != nil else { return }
        hosts[transfer.origin]!.finished(ObjectIdentifier(transfer), http1: transfer.answeredOverHTTP1)
        admitWaiting = true
    }

    /// Fails, as `noStream`, the waiting calls whose timeout has passed.
    func expireWaitingCalls() {
        let now = ContinuousClock.now
        for origin in hosts.keys where !hosts[origin]!.waiting.isEmpty {
            while let expired = hosts[origin]!.takeWaiting(where: { !$0.hasTimeLeft(now: now) }) {
                expired.finish(.failure(.noStream))
            }
        }
    }

    /// Hands curl every waiting call that has a stream (or opens the next connection) now; a call whose
    /// timeout passed while it waited fails as `noStream`, never sent.
    func admitWaitingCalls() {
        admitWaiting = false
        let now = ContinuousClock.now
        for origin in hosts.keys where !hosts[origin]!.waiting.isEmpty {
            while let next = hosts[origin]!.nextAdmitted(streamsPerConnection: Self.streamsPerConnection, maxConnections: maxConnectionsPerHost) {
                guard next.shortenTimeout(now: now) else {
                    hosts[origin]!.finished(ObjectIdentifier(next), http1: false)
                    next.finish(.failure(.noStream))
                    continue
                }
                startAdmitted(next)
            }
        }
    }
}
