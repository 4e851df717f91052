import CCurl
import CCurlShims

extension CurlMulti {
    /// `transfer`'s request is about to go out (inside curl): a connection curl opened for it is ready now.
    func connected(_ transfer: CurlTransfer) {
        guard transfer.https else { return }
        // Optional chaining: in place, and curl is asked only for a host being tracked.
        hosts[transfer.origin]?.connected(ObjectIdentifier(transfer), socket: twobits_easy_active_socket(transfer.easy),
                                          opened: twobits_easy_info_long(transfer.easy, CURLINFO_NUM_CONNECTS) > 0)
        admitWaiting = true
    }

    /// `transfer` left curl (done or taken out): its stream is free.
    func ended(_ transfer: CurlTransfer) {
        guard transfer.https else { return }
        hosts[transfer.origin]?.finished(ObjectIdentifier(transfer), http1: transfer.answeredOverHTTP1)
        admitWaiting = true
    }

    /// Fails, as `noStream`, the waiting calls whose timeout has passed.
    func expireWaitingCalls() {
        let now = ContinuousClock.now
        // By index, through `values`: in place (iterating `keys` while changing a value would copy the table).
        var index = hosts.startIndex
        while index != hosts.endIndex {
            while let expired = hosts.values[index].takeWaiting(where: { !$0.hasTimeLeft(now: now) }) {
                expired.finish(.failure(.noStream))
            }
            index = hosts.index(after: index)
        }
    }

    /// Hands curl every waiting call that has a stream (or opens the next connection) now; a call whose
    /// timeout passed while it waited fails as `noStream`, never sent.
    func admitWaitingCalls() {
        admitWaiting = false
        let now = ContinuousClock.now
        // In place, as in expireWaitingCalls; curl_multi_add_handle adds no host (it only moves curl's timer).
        var index = hosts.startIndex
        while index != hosts.endIndex {
            while let next = hosts.values[index].nextAdmitted(streamsPerConnection: Self.streamsPerConnection, maxConnections: maxConnectionsPerHost) {
                guard next.shortenTimeout(now: now) else {
                    hosts.values[index].finished(ObjectIdentifier(next), http1: false)
                    next.finish(.failure(.noStream))
                    continue
                }
                startAdmitted(next)
            }
            index = hosts.index(after: index)
        }
    }
}
