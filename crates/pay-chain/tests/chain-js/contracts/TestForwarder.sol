// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.30;

/// Sends the ether it receives on to another address from inside a contract: an internal
/// transfer, as exchanges and smart wallets pay, which no top-level transaction shows.
contract TestForwarder {
    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward");
    }
}
