// SPDX-License-Identifier: MIT
// A test stand-in for Tether USD as deployed on Ethereum: transfer,
// transferFrom and approve return nothing (not the bool ERC-20 asks for),
// so a caller that decodes a return value fails on it. Six decimals; the
// owner mints.
pragma solidity ^0.8.20;

contract TestUSDT {
    string public constant name = "Test Tether USD";
    string public constant symbol = "USDT";
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor() {
        owner = msg.sender;
    }

    function transfer(address to, uint256 value) public {
        _move(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) public {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "insufficient allowance");
        allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
    }

    function approve(address spender, uint256 value) public {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    function mint(address to, uint256 value) public {
        require(msg.sender == owner, "only the owner mints");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function _move(address from, address to, uint256 value) internal {
        require(to != address(0), "transfer to the zero address");
        require(balanceOf[from] >= value, "insufficient balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
