// msgpackr loads this optionally and uses its JavaScript decoder when it exports nothing.
module.exports = null;
