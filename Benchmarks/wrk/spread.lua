-- Shared by the wrk scripts: with TWOBITS_WRK_ADDRS="host:port,host:port,..." (bench.py sets it for
-- several replicas), wrk thread i connects to address i mod N, so the load is split evenly between the
-- replicas (wrk divides the connections evenly between its threads). Without it, the URL's address.
local spread_addrs = nil

function spread(thread, id)
    local list = os.getenv("TWOBITS_WRK_ADDRS")
    if not list or #list == 0 then return end
    if not spread_addrs then
        spread_addrs = {}
        for host, port in list:gmatch("([^,:]+):(%d+)") do
            spread_addrs[#spread_addrs + 1] = wrk.lookup(host, port)[1]
        end
    end
    thread.addr = spread_addrs[(id % #spread_addrs) + 1]
end
