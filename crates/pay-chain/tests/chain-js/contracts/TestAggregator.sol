// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.30;

/// A Chainlink-style price feed (AggregatorV3Interface's reading side) whose answer and update
/// time the test sets.
contract TestAggregator {
    uint8 public immutable decimals;
    int256 private answer;
    uint256 private updatedAt;
    uint80 private roundId;

    constructor(uint8 decimals_, int256 answer_) {
        decimals = decimals_;
        set(answer_, block.timestamp);
    }

    function set(int256 answer_, uint256 updatedAt_) public {
        answer = answer_;
        updatedAt = updatedAt_;
        roundId += 1;
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (roundId, answer, updatedAt, updatedAt, roundId);
    }
}
